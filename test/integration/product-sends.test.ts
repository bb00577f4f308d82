import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { admin, api, newTenant, sim, uniquePhone, type Tenant } from '../support/stack.js';

// Product messages into a chat (send-product, send-product-list, send-catalogue) through the chat
// send path to the simulator, which judges the interactive payloads as the Cloud API does. Shops,
// products and listings are written with SQL: what a send needs is a product live on a platform.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());
const db = () => orm.em.fork();
let seq = 0;

async function withNumber(t: Tenant) {
  const phoneNumberId = `40${t.accountId}${Date.now() % 100000}`;
  await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number: `+2556${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  return phoneNumberId;
}

/**
 * A shop on both platforms. Live everywhere: A-1..A-40 (A-1 with an image); B-2 pending on the chat
 * channel; S-3 live on the chat channel only.
 */
async function shopOf(accountId: number, o: { meta?: boolean } = {}) {
  const metaCatalogueId = o.meta === false ? null : `9${accountId}${process.pid % 1000}${++seq}${Date.now() % 10000}`;
  const shop = await one<{ id: number }>(
    db(),
    `insert into catalogues (account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, created_at, updated_at)
     values (?, ?, 'USD', ?, '["whatsapp", "storefront"]'::jsonb, 'TST', now(), now()) returning id`,
    [accountId, `Send shop ${process.pid}-${seq}`, metaCatalogueId],
  );
  const skus = [...Array.from({ length: 40 }, (_, i) => `A-${i + 1}`), 'B-2', 'S-3'];
  const products = await many<{ id: string; sku: string }>(
    db(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, created_at, updated_at)
     select ?, ?, s, 'Product ' || s, 1000, 'USD', 'in stock', now(), now() from unnest(?::text[]) as s returning id, sku`,
    [accountId, shop!.id, skus],
  );
  const state = (sku: string, platform: string) =>
    sku === 'B-2' && platform === 'whatsapp' ? 'pending' : sku === 'S-3' && platform === 'storefront' ? 'blocked' : 'synced';
  const rows = products.flatMap((p) => ['whatsapp', 'storefront'].map((platform) => [p.id, platform, state(p.sku, platform)]));
  await many(
    db(),
    `insert into product_listings (product_id, platform, state, pushed_revision, updated_at)
     select (r->>0)::bigint, r->>1, r->>2, 1, now() from jsonb_array_elements(?::jsonb) as r returning product_id`,
    [JSON.stringify(rows)],
  );
  return { id: shop!.id, metaCatalogueId };
}

/** A tenant with a chat number, a shop, and a customer who wrote in (the window is open). */
async function ready() {
  const t = await newTenant();
  const phoneNumberId = await withNumber(t);
  const shop = await shopOf(t.accountId);
  const customer = uniquePhone('2557');
  await sim('POST', '/_sim/whatsapp/inbound', { from: customer.replace('+', ''), phone_number_id: phoneNumberId, text: 'hi' });
  return { t, phoneNumberId, shop, customer };
}
const simSeen = async (to: string) =>
  (await sim('GET', `/_sim/whatsapp/messages?to=${encodeURIComponent(to.replace('+', ''))}`)).body.messages as any[];
const post = (t: Tenant, what: string, body: unknown) => api('POST', `/api/v3/catalogues/${what}`, t.token, body);
const outboundCount = async (accountId: number) =>
  Number(
    (await one<{ n: string }>(db(), `select count(*) as n from messages where account_id = ? and direction = 'outbound'`, [accountId]))!.n,
  );

test('send-product: the provider catalogue id and retailer id go out; data.message_id is the provider’s id', async () => {
  const { t, shop, customer } = await ready();
  const r = await post(t, 'send-product', {
    to: customer,
    catalogue_id: shop.metaCatalogueId,
    product_retailer_id: 'A-1',
    body: 'Our best seller',
    footer: 'Free delivery',
  });
  assert.equal(r.status, 201, r.text);
  assert.match(r.body.data.message_id, /^wamid\./);
  assert.equal(r.body.data.platform, 'whatsapp');
  assert.equal(r.body.data.catalogue_id, shop.id);
  const [seen] = await simSeen(customer);
  assert.equal(seen.id, r.body.data.message_id);
  assert.deepEqual(seen.request.body.interactive, {
    type: 'product',
    body: { text: 'Our best seller' },
    footer: { text: 'Free delivery' },
    action: { catalog_id: shop.metaCatalogueId, product_retailer_id: 'A-1' },
  });
  // The shop named by its local id, or not at all (the account's one shop), works the same.
  const byLocal = await post(t, 'send-product', { to: customer, catalogue_id: shop.id, product_retailer_id: 'A-2' });
  assert.equal(byLocal.status, 201, byLocal.text);
  const byNone = await post(t, 'send-product', { to: customer, product_retailer_id: 'A-3' });
  assert.equal(byNone.status, 201, byNone.text);
  const msg = await api('GET', `/api/v3/whatsapp/${r.body.data.uid}`, t.token);
  assert.equal(msg.body.data.gateway_message_id, r.body.data.message_id);
});

test('send-product-list and send-catalogue reach the provider in the Cloud API shapes', async () => {
  const { t, shop, customer } = await ready();
  const list = await post(t, 'send-product-list', {
    to: customer,
    catalogue_id: shop.metaCatalogueId,
    header_text: 'New in',
    body: 'Have a look',
    footer: 'Ends Sunday',
    sections: [
      { title: 'Teas', product_items: [{ product_retailer_id: 'A-1' }, { product_retailer_id: 'A-2' }] },
      { title: 'Cups', product_items: [{ product_retailer_id: 'S-3' }] },
    ],
  });
  assert.equal(list.status, 201, list.text);
  assert.match(list.body.data.message_id, /^wamid\./);
  const whole = await post(t, 'send-catalogue', { to: customer, body: 'Browse everything', thumbnail_product_retailer_id: 'A-1' });
  assert.equal(whole.status, 201, whole.text);
  assert.match(whole.body.data.message_id, /^wamid\./);
  const seen = await simSeen(customer);
  const byId = new Map(seen.map((m) => [m.id, m.request.body.interactive]));
  assert.deepEqual(byId.get(list.body.data.message_id), {
    type: 'product_list',
    header: { type: 'text', text: 'New in' },
    body: { text: 'Have a look' },
    footer: { text: 'Ends Sunday' },
    action: {
      catalog_id: shop.metaCatalogueId,
      sections: [
        { title: 'Teas', product_items: [{ product_retailer_id: 'A-1' }, { product_retailer_id: 'A-2' }] },
        { title: 'Cups', product_items: [{ product_retailer_id: 'S-3' }] },
      ],
    },
  });
  assert.deepEqual(byId.get(whole.body.data.message_id), {
    type: 'catalog_message',
    body: { text: 'Browse everything' },
    action: { name: 'catalog_message', parameters: { thumbnail_product_retailer_id: 'A-1' } },
  });
});

test('limits and rules are 422 and nothing is written', async () => {
  const { t, customer } = await ready();
  const sections = (n: number, each = 1) =>
    Array.from({ length: n }, (_, s) => ({
      title: `S${s}`,
      product_items: Array.from({ length: each }, (_, i) => ({ product_retailer_id: `A-${((s * each + i) % 40) + 1}` })),
    }));
  const list = (extra: Record<string, unknown>) => ({ to: customer, header_text: 'h', body: 'b', sections: sections(1), ...extra });
  const cases: Array<[string, Record<string, unknown>]> = [
    ['send-product', { to: customer, product_retailer_id: 'A-1', body: 'b'.repeat(1025) }],
    ['send-product', { to: customer, product_retailer_id: 'A-1', footer: 'f'.repeat(61) }],
    ['send-product', { to: customer }],
    ['send-product', { to: customer, product_retailer_id: 'A-1', platform: 'instagram' }],
    ['send-product', { to: 'not a number', product_retailer_id: 'A-1' }],
    ['send-product', { to: customer, product_retailer_id: 'NOPE' }],
    ['send-product', { to: customer, product_retailer_id: 'B-2' }],
    ['send-product-list', list({ header_text: 'h'.repeat(61) })],
    ['send-product-list', list({ body: 'b'.repeat(1025) })],
    ['send-product-list', list({ sections: [] })],
    ['send-product-list', list({ sections: sections(11) })],
    ['send-product-list', list({ sections: [{ title: 't'.repeat(25), product_items: [{ product_retailer_id: 'A-1' }] }] })],
    ['send-product-list', list({ sections: sections(4, 8) })],
    ['send-product-list', list({ sections: [{ title: 'x', product_items: [{ product_retailer_id: 'B-2' }] }] })],
    ['send-product-list', { to: customer, body: 'b', sections: sections(1) }],
    ['send-catalogue', { to: customer }],
    ['send-catalogue', { to: customer, body: 'b', footer: 'f'.repeat(61) }],
    ['send-catalogue', { to: customer, body: 'b', thumbnail_product_retailer_id: 'NOPE' }],
  ];
  for (const [what, body] of cases) {
    const r = await post(t, what, body);
    assert.equal(r.status, 422, `${what} ${JSON.stringify(body).slice(0, 120)}: ${r.status} ${r.text.slice(0, 200)}`);
  }
  assert.equal(await outboundCount(t.accountId), 0);
});

test('missing chat configuration is 422: no chat number, or a shop without a provider catalogue', async () => {
  const t = await newTenant();
  const shop = await shopOf(t.accountId);
  const customer = uniquePhone('2557');
  const noNumber = await post(t, 'send-product', { to: customer, catalogue_id: shop.id, product_retailer_id: 'A-1' });
  assert.equal(noNumber.status, 422, noNumber.text);
  assert.ok(noNumber.body.errors?.from, noNumber.text);
  const u = await newTenant();
  await withNumber(u);
  const bare = await shopOf(u.accountId, { meta: false });
  for (const [what, body] of [
    ['send-product', { to: customer, catalogue_id: bare.id, product_retailer_id: 'A-1' }],
    [
      'send-product-list',
      { to: customer, header_text: 'h', body: 'b', sections: [{ title: 't', product_items: [{ product_retailer_id: 'A-1' }] }] },
    ],
    ['send-catalogue', { to: customer, body: 'b' }],
  ] as const) {
    const r = await post(u, what, body);
    assert.equal(r.status, 422, `${what}: ${r.text}`);
  }
  assert.equal(await outboundCount(t.accountId), 0);
  assert.equal(await outboundCount(u.accountId), 0);
});

test('a provider refusal is 502', async () => {
  const { t, customer } = await ready();
  await sim('POST', '/_sim/faults', { provider: 'whatsapp', kind: 'error', code: 131009, to: customer, count: 3 });
  try {
    for (const [what, body] of [
      ['send-product', { to: customer, product_retailer_id: 'A-1' }],
      ['send-catalogue', { to: customer, body: 'b' }],
    ] as const) {
      const r = await post(t, what, body);
      assert.equal(r.status, 502, `${what}: ${r.text}`);
      assert.match(r.body.message, /refused/);
    }
  } finally {
    await sim('DELETE', '/_sim/faults?provider=whatsapp');
  }
});

test('another platform: the product’s address there and the requests that send it; 422 when not published there', async () => {
  const { t, shop, customer } = await ready();
  const r = await post(t, 'send-product', { to: customer, platform: 'storefront', catalogue_id: shop.id, product_retailer_id: 'A-1' });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.data.platform, 'storefront');
  assert.equal(r.body.data.message_id, null);
  assert.match(r.body.data.url, new RegExp(`/shop/${shop.id}/p/A-1$`));
  const paths = r.body.data.send_with.map((s: { path: string }) => s.path);
  assert.deepEqual(paths, ['/api/v3/whatsapp/send', '/api/v3/sms/send']);
  assert.equal(r.body.data.send_with[0].body.interactive.action.parameters.url, r.body.data.url);
  const notThere = await post(t, 'send-product', {
    to: customer,
    platform: 'storefront',
    catalogue_id: shop.id,
    product_retailer_id: 'S-3',
  });
  assert.equal(notThere.status, 422, notThere.text);
  assert.equal(await outboundCount(t.accountId), 0, 'nothing is sent');
  // A storefront shop without the chat channel's catalogue still answers its address.
  const u = await newTenant();
  const bare = await shopOf(u.accountId, { meta: false });
  const plain = await post(u, 'send-product', { to: customer, platform: 'storefront', product_retailer_id: 'A-2' });
  assert.equal(plain.status, 201, plain.text);
  assert.match(plain.body.data.url, new RegExp(`/shop/${bare.id}/p/A-2$`));
});

test('tenant isolation and permissions: another tenant’s shop is not found; a send needs communications.send', async () => {
  const a = await ready();
  const b = await ready();
  for (const ref of [a.shop.id, a.shop.metaCatalogueId]) {
    const r = await post(b.t, 'send-product', { to: b.customer, catalogue_id: ref, product_retailer_id: 'A-1' });
    assert.equal(r.status, 404, `${ref}: ${r.text}`);
    const s = await post(b.t, 'send-product', { to: b.customer, platform: 'storefront', catalogue_id: ref, product_retailer_id: 'A-1' });
    assert.equal(s.status, 404, `${ref}: ${s.text}`);
  }
  assert.equal(await outboundCount(b.t.accountId), 0);

  const noSend = await newTenant({ permissions: ['communications.catalogue.view', 'communications.catalogue.manage'] });
  await withNumber(noSend);
  await shopOf(noSend.accountId);
  const refused = await post(noSend, 'send-product', { to: a.customer, product_retailer_id: 'A-1' });
  assert.equal(refused.status, 403, refused.text);
  const viewOnly = await newTenant({ permissions: ['communications.catalogue.view', 'communications.send'] });
  assert.equal((await post(viewOnly, 'send-catalogue', { to: a.customer, body: 'b' })).status, 403);
  // Another platform's answer sends nothing, so the catalogue permission is enough.
  const address = await post(noSend, 'send-product', { to: a.customer, platform: 'storefront', product_retailer_id: 'A-1' });
  assert.equal(address.status, 201, address.text);
  // Legacy keys (no issuer) are refused on these newer endpoints.
  assert.equal((await api('POST', '/api/v3/catalogues/send-catalogue', a.t.legacyToken, { to: a.customer, body: 'b' })).status, 403);
});

test('the product sends are MCP tools on the shop server with the send elevation', async () => {
  const m = await api('GET', '/api-docs/mcp.json', null);
  assert.equal(m.status, 200);
  const byName = new Map<string, any>(m.body.tools.map((x: any) => [x.name, x]));
  for (const name of ['send_product', 'send_product_list', 'send_catalogue']) {
    const tool = byName.get(name);
    assert.ok(tool, name);
    assert.deepEqual([tool.scope, tool.elevation, tool.permission], ['mcp:commerce', 'mcp:send', 'communications.catalogue.manage']);
    assert.ok(m.body.endpoints.find((e: any) => e.key === 'shop').tools.includes(name));
  }
});
