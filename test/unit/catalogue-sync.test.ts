import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  capProblems,
  firstProblem,
  ingestProblem,
  platformCounts,
  productWrite,
  rowIdentity,
  type MatchedProduct,
  type ShopRules,
  type SyncRow,
} from '../../domain/catalogues/sync.js';
import { batchRequestHash, canonicalJson } from '../../services/catalogues/syncs.js';

const shop: ShopRules = { defaultCurrency: 'TZS', allowBackorders: false };
const stored: MatchedProduct = {
  id: 7,
  sku: 'TEE-1',
  name: 'Tee',
  description: 'soft',
  price: 1000,
  sale_price: 900,
  currency: 'USD',
  image_url: 'https://example.com/t.png',
  availability: 'discontinued',
  availability_explicit: true,
  condition: 'new',
  inventory: 5,
  reserved: 2,
  visibility: 'staging',
  brand: 'Acme',
  category: 'Shirts',
  product_type: 'apparel',
};
const write = (row: SyncRow, matched: MatchedProduct | null, rules = shop) => {
  const id = rowIdentity(row);
  assert.ok(!('reason' in id));
  return productWrite(row, id, matched?.sku ?? id.sku ?? 'SHOP-000001', matched, rules);
};

test('a row is identified by its sku (or retailer_id, which must agree), else by its trimmed name', () => {
  assert.deepEqual(rowIdentity({ sku: ' A ', name: ' Tee ', price: 1 }), { sku: 'A', name: 'Tee' });
  assert.deepEqual(rowIdentity({ retailer_id: 'B', name: 'Tee', price: 1 }), { sku: 'B', name: 'Tee' });
  assert.deepEqual(rowIdentity({ name: 'Mug', price: 1 }), { name: 'Mug' });
  assert.equal((rowIdentity({ sku: 'A', retailer_id: 'B', name: 'x', price: 1 }) as { field: string }).field, 'retailer_id');
  assert.deepEqual(rowIdentity({ name: '   ', price: 1 }), { field: 'name', reason: 'The name field is required.' });
});

test('a new product: defaults for what the row leaves out, the shop currency, availability from the stock count', () => {
  assert.deepEqual(write({ name: 'Cap', price: 500, inventory: 0 }, null), {
    sku: 'SHOP-000001',
    name: 'Cap',
    description: null,
    price: 500,
    sale_price: null,
    currency: 'TZS',
    image_url: null,
    availability: 'out of stock',
    availability_explicit: false,
    condition: null,
    inventory: 0,
    visibility: 'published',
    brand: null,
    category: null,
    product_type: null,
  });
  const backorder = write({ name: 'Cap', price: 500, inventory: 0, currency: 'eur' }, null, {
    defaultCurrency: null,
    allowBackorders: true,
  });
  assert.deepEqual(
    [(backorder as { availability: string }).availability, (backorder as { currency: string }).currency],
    ['available for order', 'EUR'],
  );
  assert.deepEqual(write({ name: 'Cap', price: 1 }, null, { defaultCurrency: null, allowBackorders: false }), {
    field: 'currency',
    reason: 'The currency field is required: the shop has no default currency.',
  });
});

test('a stored product: unsent fields keep their values, null clears, create-only fields stay, an explicit availability holds', () => {
  const w = write({ sku: 'TEE-1', name: 'Tee 2', price: 1200, description: null, inventory: 0, brand: '  ' }, stored);
  const { id: _id, reserved: _reserved, ...fields } = stored;
  assert.deepEqual(w, { ...fields, name: 'Tee 2', price: 1200, description: null, inventory: 0, brand: null });
  const derived = write({ sku: 'TEE-1', name: 'Tee', price: 1000, availability: null, inventory: 3 }, stored);
  assert.deepEqual(
    [(derived as { availability: string }).availability, (derived as { availability_explicit: boolean }).availability_explicit],
    ['in stock', false],
  );
  const held = write({ sku: 'TEE-1', name: 'Tee', price: 1000, availability: null, inventory: 2 }, stored);
  assert.equal((held as { availability: string }).availability, 'out of stock', 'available is inventory less reserved');
  const untouched = write({ sku: 'TEE-1', name: 'Tee', price: 1000, visibility: 'published', product_type: 'other' }, stored);
  assert.deepEqual(
    [(untouched as { visibility: string }).visibility, (untouched as { product_type: string }).product_type],
    ['staging', 'apparel'],
  );
});

test('problems: the first field message, the row number, the sku the row sent; at most 200 kept', () => {
  const refusal = firstProblem({ price: ['The price must be at least 0.', 'other'], name: ['x'] });
  assert.deepEqual(refusal, { field: 'price', reason: 'The price must be at least 0.' });
  assert.deepEqual(ingestProblem(4, { retailer_id: 'R' }, refusal), {
    sku: 'R',
    stage: 'ingest',
    reason: 'The price must be at least 0.',
    row: 4,
    field: 'price',
  });
  assert.equal(ingestProblem(5, 'text', refusal).sku, null);
  const many = Array.from({ length: 30 }, (_, i) => ingestProblem(i + 1, {}, refusal));
  assert.deepEqual(
    [
      capProblems(0, many).keep.length,
      capProblems(0, many).truncated,
      capProblems(190, many).keep.length,
      capProblems(190, many).truncated,
    ],
    [30, false, 10, true],
  );
  assert.deepEqual(capProblems(200, []), { keep: [], truncated: false });
  assert.deepEqual(platformCounts({ whatsapp: { synced: 3, blocked: 1, failed: 2 } as never }), { whatsapp: { synced: 3, blocked: 1 } });
});

test('an Idempotency-Key stands for the request: key order and an absent mode do not change it, the rows do', () => {
  assert.equal(canonicalJson({ b: 1, a: [{ y: null, x: 'é' }] }), '{"a":[{"x":"é","y":null}],"b":1}');
  const rows = [{ sku: 'A', name: 'A', price: 1 }];
  assert.equal(batchRequestHash('upsert', rows), batchRequestHash('upsert', [{ price: 1, name: 'A', sku: 'A' }]));
  assert.notEqual(batchRequestHash('upsert', rows), batchRequestHash('replace', rows));
  assert.notEqual(batchRequestHash('upsert', rows), batchRequestHash('upsert', [{ ...rows[0], price: 2 }]));
});
