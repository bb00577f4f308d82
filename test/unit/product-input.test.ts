import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  availabilityOnWrite,
  availableOf,
  changedFields,
  issuedSkuCandidates,
  listPage,
  nextIssuedSku,
  recordName,
  skuFrozen,
  skuOfCreate,
} from '../../domain/catalogues/product-input.js';

test('list pages of the catalogue family: default 25, limit wins over per_page, cap 100, nonpositive reads as the default', () => {
  assert.deepEqual(listPage({}), { page: 1, perPage: 25, offset: 0 });
  assert.deepEqual(listPage({ per_page: 10, limit: 5, page: 3 }), { page: 3, perPage: 5, offset: 10 });
  assert.equal(listPage({ per_page: 10 }).perPage, 10);
  assert.equal(listPage({ limit: 1000 }).perPage, 100);
  for (const v of [0, -1, -1000]) {
    assert.equal(listPage({ limit: v }).perPage, 25, `limit ${v}`);
    assert.equal(listPage({ per_page: v }).perPage, 25, `per_page ${v}`);
    assert.equal(listPage({ page: v }).page, 1, `page ${v}`);
  }
  assert.equal(listPage({ limit: 0, per_page: 7 }).perPage, 25, 'a nonpositive limit still wins: it reads as the default');
});

test('sku of a create: sku or its older name retailer_id; both sent must agree; neither means the shop issues one', () => {
  assert.deepEqual(skuOfCreate({}), { sku: undefined });
  assert.deepEqual(skuOfCreate({ sku: 'A-1' }), { sku: 'A-1' });
  assert.deepEqual(skuOfCreate({ retailer_id: 'A-1' }), { sku: 'A-1' });
  assert.deepEqual(skuOfCreate({ sku: ' A-1 ', retailer_id: 'A-1' }), { sku: 'A-1' });
  assert.ok(skuOfCreate({ sku: 'A-1', retailer_id: 'A-2' }).errors?.retailer_id);
  assert.ok(skuOfCreate({ sku: '   ' }).errors?.sku);
});

test('issued skus: prefix-digits, sortable, skipping values callers chose', () => {
  assert.deepEqual(
    nextIssuedSku('ACME', 0, () => false),
    { sku: 'ACME-000001', seq: 1 },
  );
  const taken = new Set(['ACME-000002', 'ACME-000003']);
  assert.deepEqual(
    nextIssuedSku('ACME', 1, (s) => taken.has(s)),
    { sku: 'ACME-000004', seq: 4 },
  );
  assert.deepEqual(issuedSkuCandidates('X', 9, 2), ['X-000010', 'X-000011']);
  const issued = [1, 2, 10, 99, 100, 999_999].map((n) => nextIssuedSku('S', n - 1, () => false).sku);
  assert.deepEqual([...issued].sort(), issued, 'issue order is sort order up to a million');
});

test('availability on a write: an explicit value wins; null hands it back to the count; absent keeps an explicit one', () => {
  assert.deepEqual(availabilityOnWrite(undefined, null, null, false), { availability: 'in stock', explicit: false }, 'untracked');
  assert.deepEqual(availabilityOnWrite(undefined, null, 0, false), { availability: 'out of stock', explicit: false });
  assert.deepEqual(availabilityOnWrite(undefined, null, 0, true), { availability: 'available for order', explicit: false }, 'backorders');
  assert.deepEqual(availabilityOnWrite(undefined, null, 5, false), { availability: 'in stock', explicit: false });
  assert.deepEqual(availabilityOnWrite('preorder', null, 0, false), { availability: 'preorder', explicit: true }, 'explicit wins');
  const explicit = { availability: 'discontinued' as const, explicit: true };
  assert.deepEqual(availabilityOnWrite(undefined, explicit, 10, false), explicit, 'absent keeps the choice');
  assert.deepEqual(availabilityOnWrite(null, explicit, 10, false), { availability: 'in stock', explicit: false }, 'null gives it back');
  const derived = { availability: 'in stock' as const, explicit: false };
  assert.deepEqual(availabilityOnWrite(undefined, derived, 0, false), { availability: 'out of stock', explicit: false }, 're-derived');
  assert.equal(availableOf(null, 3), null);
  assert.equal(availableOf(5, 3), 2);
});

test('sku frozen once any platform accepted a push; brand and category text trimmed, blank clears', () => {
  assert.equal(skuFrozen([]), false);
  assert.equal(skuFrozen([{ pushedRevision: 0 }, { pushedRevision: 0 }]), false);
  assert.equal(skuFrozen([{ pushedRevision: 0 }, { pushedRevision: 2 }]), true);
  assert.equal(recordName(undefined), undefined);
  assert.equal(recordName(null), null);
  assert.equal(recordName('   '), null);
  assert.equal(recordName(' Acme '), 'Acme');
});

test('changed fields: only keys sent, values compared by content', () => {
  assert.deepEqual(changedFields({ a: 1, b: 'x', c: null }, { a: 1, b: 'y', c: null }), ['b']);
  assert.deepEqual(changedFields({ a: 1, b: null as string | null }, { b: 'now' }), ['b']);
  assert.deepEqual(changedFields({ a: [1, 2] }, { a: [1, 2] }), []);
});
