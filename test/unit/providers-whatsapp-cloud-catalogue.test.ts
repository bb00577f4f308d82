import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  catalogueFailure,
  createWhatsAppCatalogue,
  itemData,
  metaPrice,
  parseMetaPrice,
  platformItemOf,
  shopLink,
} from '../../providers/whatsapp-cloud/catalogue.js';
import type { CatalogueItemSource } from '../../providers/types.js';

// The Meta catalogue adapter against the Batch API's documented item shape and Graph's error codes.

const product: CatalogueItemSource = {
  shopId: 7,
  sku: 'TEA-000001',
  name: 'Green tea',
  description: null,
  price: 1250,
  salePrice: 999,
  currency: 'usd',
  imageUrl: 'https://img.example/tea.jpg',
  availability: 'in stock',
  condition: null,
  brand: 'Leaf',
  category: 'Food > Tea',
  productType: 'Loose tea',
  available: 12,
};

const reply = (status: number, json: unknown, headers: Record<string, string> = {}) => ({
  status,
  json,
  text: JSON.stringify(json),
  headers: { get: (n: string) => headers[n.toLowerCase()] ?? null },
});

test('prices in hundredths become Meta price strings and back', () => {
  assert.equal(metaPrice(1250, 'USD'), '12.50 USD');
  assert.equal(metaPrice(5, 'tzs'), '0.05 TZS');
  assert.equal(metaPrice(100_000_000_000_00, 'EUR'), '100000000000.00 EUR');
  assert.equal(metaPrice(0, 'USD'), '0.00 USD');
  assert.deepEqual(parseMetaPrice('12.50 USD'), { amount: 1250, currency: 'USD' });
  assert.deepEqual(parseMetaPrice('USD 12.5'), { amount: 1250, currency: 'USD' });
  assert.deepEqual(parseMetaPrice('$1,234.05'), { amount: 123405, currency: null });
  assert.deepEqual(parseMetaPrice('7 KES'), { amount: 700, currency: 'KES' });
  assert.equal(parseMetaPrice('free'), null);
  assert.equal(parseMetaPrice(null), null);
});

test('an item carries Meta’s required fields: description falls back to the name, condition to new, a link to the shop page', () => {
  const data = itemData(product, 'https://shop.example.com/');
  assert.deepEqual(data, {
    id: 'TEA-000001',
    title: 'Green tea',
    description: 'Green tea',
    availability: 'in stock',
    condition: 'new',
    price: '12.50 USD',
    sale_price: '9.99 USD',
    link: 'https://shop.example.com/shop/7/p/TEA-000001',
    image_link: 'https://img.example/tea.jpg',
    brand: 'Leaf',
    google_product_category: 'Food > Tea',
    product_type: 'Loose tea',
    inventory: 12,
  });
  const bare = itemData({ ...product, salePrice: null, brand: null, available: -2, description: 'Fresh', condition: 'used' }, 'http://x');
  assert.equal(bare.sale_price, null, 'a removed sale price is cleared on the platform');
  assert.equal(bare.brand, null);
  assert.equal(bare.inventory, 0, 'an oversold product shows none, never a negative count');
  assert.equal(bare.description, 'Fresh');
  assert.equal(bare.condition, 'used');
  assert.equal(shopLink('http://x', 3, 'a b/c'), 'http://x/shop/3/p/a%20b%2Fc');
});

test('upsert requests are UPDATEs (allow_upsert creates), deletes name only the retailer id', () => {
  const cat = createWhatsAppCatalogue({
    baseUrl: 'http://127.0.0.1:9/v21.0',
    accessToken: 't',
    businessId: '1',
    publicBaseUrl: 'http://x',
  });
  const up = cat.upsertRequest(product);
  assert.equal(up.method, 'UPDATE');
  assert.equal(up.retailerId, 'TEA-000001');
  assert.deepEqual(cat.deleteRequest('TEA-000001'), { method: 'DELETE', retailerId: 'TEA-000001', data: { id: 'TEA-000001' } });
  assert.equal(cat.maxRequestsPerBatch, 5000);
});

test('Graph errors: refusals are permanent; throttles, outages and unknown errors are retried', () => {
  const f = (status: number, code: number, message = 'x', headers: Record<string, string> = {}) =>
    catalogueFailure(reply(status, { error: { message, type: 'OAuthException', code, fbtrace_id: 'A' } }, headers));
  const refused = f(403, 200, '(#200) Requires business_management permission to manage the object');
  assert.deepEqual(
    [refused.permanent, refused.code, refused.message],
    [true, '200', '(#200) Requires business_management permission to manage the object'],
  );
  assert.equal(f(400, 100).permanent, true, 'invalid parameter');
  assert.equal(f(401, 190).permanent, true, 'bad token');
  assert.equal(
    f(400, 1, "Please reduce the amount of data you're asking for, then retry your request").permanent,
    true,
    'shrink, not retry',
  );
  assert.equal(f(500, 1, 'An unknown error occurred').permanent, false);
  const limited = f(400, 80014, '(#80014) There have been too many calls for the batch uploads to this catalog account.');
  assert.deepEqual([limited.permanent, limited.retryAfterSeconds], [false, 60]);
  assert.deepEqual([f(400, 4).permanent, f(400, 4, 'x', { 'retry-after': '3' }).retryAfterSeconds], [false, 3]);
  assert.equal(f(500, 2).permanent, false);
  assert.equal(f(503, 999).permanent, false);
  assert.equal(catalogueFailure(reply(429, 'slow down')).permanent, false);
  assert.equal(catalogueFailure(reply(404, null)).code, 'http_404');
});

test('a product read back is in our words (hundredths, Meta’s product id)', () => {
  const item = platformItemOf({
    id: '1234567890123456',
    retailer_id: 'TEA-000001',
    name: 'Green tea',
    description: 'Fresh',
    price: '12.50 USD',
    sale_price: '$9.99',
    availability: 'in stock',
    condition: 'new',
    brand: 'Leaf',
    category: 'Food > Tea',
    image_url: 'https://img.example/tea.jpg',
  });
  assert.deepEqual(item, {
    providerId: '1234567890123456',
    retailerId: 'TEA-000001',
    name: 'Green tea',
    description: 'Fresh',
    price: 1250,
    salePrice: 999,
    currency: 'USD',
    availability: 'in stock',
    condition: 'new',
    brand: 'Leaf',
    category: 'Food > Tea',
    productType: null,
    imageUrl: 'https://img.example/tea.jpg',
  });
  assert.equal(platformItemOf({ name: 'no ids' }), null);
});

test('a call the network never reaches is a retryable failure, and more than 5,000 requests are refused before sending', async () => {
  const cat = createWhatsAppCatalogue({
    baseUrl: 'http://127.0.0.1:9/v21.0',
    accessToken: 't',
    businessId: '1',
    publicBaseUrl: 'http://x',
    timeoutMs: 500,
  });
  const r = await cat.createCatalogue({ name: 'Shop' });
  assert.equal(r.ok, false);
  assert.equal(!r.ok && r.permanent, false);
  const many = Array.from({ length: 5001 }, (_, i) => cat.deleteRequest(`S-${i}`));
  const big = await cat.sendItems('1', many);
  assert.equal(!big.ok && big.permanent, true);
});
