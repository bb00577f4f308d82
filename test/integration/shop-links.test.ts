import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openShop, coffee as coffeeBody, tea as teaBody } from '../support/shop.js';
import { API_URL, admin, api, eventually, http, newTenant, sim, uniquePhone, type Tenant } from '../support/stack.js';

// Shop links and baskets: links for sharing (menu, category by id or slug, product), problems[]
// for unmatched lines, prices computed by the service (size replaces, add-ons add, sale price),
// links sent into a chat as a button (communications.send; 409 outside the 24-hour window), the
// basket list and read by ref or id, abandonment after the quiet period, bad input and isolation.

const C = '/api/v3/catalogues';

async function shopWithMenu(t: Tenant) {
  const { shop, product } = await openShop(t, 'Corner Café');
  const coffee = await product(coffeeBody());
  const tea = await product(teaBody);
  const cake = await product({ sku: 'CAKE', name: 'Cake <b>"&"</b>', price: 500, category: 'Bakery & Sweets' });
  const gone = await product({ sku: 'GONE', name: 'Gone', price: 100, availability: 'discontinued' });
  return { shop, coffee, tea, cake, gone };
}

async function waTenant(opts: { permissions?: string[] } = {}) {
  const t = await newTenant(opts);
  const phoneNumberId = `30${t.accountId}${Date.now() % 100000}`;
  const number = `+2554${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  const r = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(r.status, 201, r.text);
  return { ...t, phoneNumberId, number };
}

const cartsTotal = async (t: Tenant) => (await api('GET', '/api/v3/carts', t.token)).body.data.pagination.total as number;

test('a link for sharing: lines priced by the service, problems[] for unmatched lines, sent false; read by ref or id', async () => {
  const t = await newTenant();
  const { shop, coffee } = await shopWithMenu(t);
  assert.deepEqual(
    coffee.variants.map((v: any) => [v.name, v.price]),
    [
      ['Small', 300],
      ['Large', 450],
    ],
  );
  const shot = coffee.addons.find((a: any) => a.name === 'Extra shot');
  const r = await api('POST', '/api/v3/shop-links', t.token, {
    items: [
      { sku: 'COF', variant: 'large', addons: ['Oat milk', shot.id], quantity: 2, note: 'very hot' },
      { sku: 'NOPE' },
      { sku: 'TEA' },
      { sku: 'GONE' },
      { sku: 'COF' },
    ],
  });
  assert.equal(r.status, 201, r.text);
  const d = r.body.data;
  assert.equal(d.sent, false);
  assert.deepEqual(
    d.problems.map((p: any) => [p.index, p.sku]),
    [
      [1, 'NOPE'],
      [3, 'GONE'],
    ],
  );
  const cart = d.cart;
  assert.match(cart.ref, /^[A-HJKMNP-TV-Z2-9]{5}$/);
  assert.equal(d.link, cart.link);
  assert.match(d.link, new RegExp(`/shop/${cart.ref}/[A-Za-z0-9_-]{22}$`));
  assert.deepEqual(
    [cart.status, cart.catalogue_id, cart.currency, cart.conversation_id, cart.order_id],
    ['open', shop.id, 'USD', null, null],
  );
  assert.deepEqual(cart.opens, { kind: 'menu' });
  // Large (450, replaces 300) + oat milk 50 + extra shot 80 = 580 × 2; tea at its sale price; a plain coffee is its first size.
  assert.deepEqual(
    cart.items.map((i: any) => [
      i.sku,
      i.variant?.name ?? null,
      i.options.map((o: any) => o.name),
      i.quantity,
      i.unit_price_minor,
      i.line_total_minor,
    ]),
    [
      ['COF', 'Large', ['Oat milk', 'Extra shot'], 2, 580, 1160],
      ['TEA', null, [], 1, 150, 150],
      ['COF', 'Small', [], 1, 300, 300],
    ],
  );
  assert.equal(cart.items[0].note, 'very hot');
  assert.equal(cart.subtotal_minor, 1610);

  const byRef = await api('GET', `/api/v3/carts/${cart.ref.toLowerCase()}`, t.token);
  assert.equal(byRef.status, 200, byRef.text);
  assert.deepEqual(byRef.body.data, cart);
  assert.deepEqual((await api('GET', `/api/v3/carts/${cart.id}`, t.token)).body.data.ref, cart.ref);

  const page = await http('GET', d.link, { headers: { accept: 'text/html' } });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /text\/html/);
  assert.match(page.text, /Coffee/);
  assert.doesNotMatch(page.text, /<b>"&"<\/b>/, 'product names are escaped');
  assert.match(page.text, /Cake &lt;b&gt;&quot;&amp;&quot;&lt;\/b&gt;/);
});

test('what a link opens: the menu, a category by id or slug, a product; newest first, status filter', async () => {
  const t = await newTenant();
  await shopWithMenu(t);
  const link = async (body: Record<string, unknown>) => {
    const r = await api('POST', '/api/v3/shop-links', t.token, body);
    assert.equal(r.status, 201, r.text);
    return r.body.data.cart;
  };
  const bySlug = await link({ category: 'hot-drinks' });
  assert.equal(bySlug.opens.kind, 'category');
  assert.equal(bySlug.opens.slug, 'hot-drinks');
  const bakery = await link({ category: 'bakery-sweets' });
  const byId = await link({ category: String(bakery.opens.category_id) });
  assert.deepEqual(byId.opens, bakery.opens);
  const product = await link({ sku: 'TEA', category: 'hot-drinks' });
  assert.equal(product.opens.kind, 'product');
  assert.equal(product.opens.sku, 'TEA');
  assert.equal((await api('POST', '/api/v3/shop-links', t.token, { category: 'no-such' })).status, 422);
  assert.equal((await api('POST', '/api/v3/shop-links', t.token, { sku: 'NOPE' })).status, 422);
  const list = await api('GET', '/api/v3/carts?status=open', t.token);
  assert.deepEqual(
    list.body.data.carts.map((c: any) => c.id),
    [product.id, byId.id, bakery.id, bySlug.id],
  );
  assert.equal((await api('GET', '/api/v3/carts?status=ordered', t.token)).body.data.carts.length, 0);
  // The page opens on the link's category.
  const page = await http('GET', bySlug.link);
  assert.match(page.text, /class="on">Hot Drinks/);
});

test('sizes and add-ons on PUT: replaced when sent, untouched when omitted; duplicate names are 422', async () => {
  const t = await newTenant();
  const { shop, coffee } = await shopWithMenu(t);
  const P = `${C}/${shop.id}/products/${coffee.id}`;
  const renamed = await api('PUT', P, t.token, { name: 'Filter coffee' });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.data.variants.length, 2);
  const replaced = await api('PUT', P, t.token, { variants: [{ name: 'Mug', price: 400 }], addons: [] });
  assert.deepEqual([replaced.body.data.variants.map((v: any) => v.name), replaced.body.data.addons], [['Mug'], []]);
  const dup = await api('PUT', P, t.token, {
    variants: [
      { name: 'A', price: 1 },
      { name: 'a', price: 2 },
    ],
  });
  assert.equal(dup.status, 422, dup.text);
  assert.equal((await api('GET', P, t.token)).body.data.variants[0].name, 'Mug');
});

test('sent into a chat as a button: needs communications.send, inside the 24-hour window (else 409, nothing kept); abandoned when left', async () => {
  const t = await waTenant();
  await shopWithMenu(t);
  const customer = uniquePhone('2556');
  const inbound = await sim('POST', '/_sim/whatsapp/inbound', {
    from: customer.replace('+', ''),
    phone_number_id: t.phoneNumberId,
    text: 'menu?',
  });
  assert.equal(inbound.body.delivered, true, JSON.stringify(inbound.body));
  const got = await eventually(
    () => api('GET', '/api/v3/messages?direction=inbound', t.token),
    (x) => x.body.data.messages.length === 1,
  );
  const inboundUid = got.body.data.messages[0].uid;

  const r = await api('POST', '/api/v3/shop-links', t.token, { to: customer, items: [{ sku: 'TEA', quantity: 3 }] });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.body.data.sent, true);
  const cart = r.body.data.cart;
  assert.deepEqual(
    [cart.status, cart.conversation_id, cart.customer_handle],
    ['sent', `whatsapp:${t.phoneNumberId}:${customer}`, customer],
  );
  const seen = await eventually(
    async () => (await sim('GET', `/_sim/whatsapp/messages?to=${customer.replace('+', '')}`)).body.messages as any[],
    (m) => m.length === 1,
  );
  const interactive = seen[0].request.body.interactive;
  assert.equal(interactive.type, 'cta_url');
  assert.equal(interactive.action.parameters.url, r.body.data.link);

  // The same chat named by a message of it; the list filter takes either form.
  const again = await api('POST', '/api/v3/shop-links', t.token, { conversation_id: inboundUid });
  assert.equal(again.status, 201, again.text);
  assert.equal(again.body.data.cart.conversation_id, cart.conversation_id);
  for (const filter of [cart.conversation_id, inboundUid]) {
    const list = await api('GET', `/api/v3/carts?conversation_id=${encodeURIComponent(filter)}`, t.token);
    assert.deepEqual(
      list.body.data.carts.map((c: any) => c.id),
      [again.body.data.cart.id, cart.id],
    );
  }

  // A customer who has not written: outside the window, 409 and no basket.
  const before = await cartsTotal(t);
  const quiet = await api('POST', '/api/v3/shop-links', t.token, { to: uniquePhone('2556'), items: [{ sku: 'TEA' }] });
  assert.equal(quiet.status, 409, quiet.text);
  assert.equal(await cartsTotal(t), before);
  const unknownChat = await api('POST', '/api/v3/shop-links', t.token, { conversation_id: 'whatsapp:999:+255700000001' });
  assert.equal(unknownChat.status, 422);

  // The basket opened from the chat with items becomes abandoned after the quiet period (CART_QUIET_SECONDS
  // in the test stack); the one without items does not.
  const abandoned = await eventually(
    () => api('GET', `/api/v3/carts/${cart.ref}`, t.token),
    (x) => x.body.data.status === 'abandoned',
    30_000,
  );
  assert.equal(abandoned.body.data.status, 'abandoned');
  const events = await eventually(
    () => admin('GET', `/accounts/${t.accountId}/events?kind=cart.abandoned`),
    (x) => x.body.data.length >= 1,
  );
  assert.equal(events.body.data.length, 1);
  assert.equal(events.body.data[0].cart_id, cart.id);
  assert.equal(events.body.data[0].items[0].sku, 'TEA');
  assert.equal((await api('GET', `/api/v3/carts/${again.body.data.cart.ref}`, t.token)).body.data.status, 'sent');

  // A key whose issuer may not send: the link is fine for sharing, 403 into a chat.
  const viewer = await newTenant({ permissions: ['communications.catalogue.view', 'communications.catalogue.manage'] });
  await shopWithMenu(viewer);
  assert.equal((await api('POST', '/api/v3/shop-links', viewer.token, {})).status, 201);
  const refused = await api('POST', '/api/v3/shop-links', viewer.token, { to: customer });
  assert.equal(refused.status, 403, refused.text);
});

test('bad input: zero and negative quantities, unknown sizes and add-ons, 10,000 lines: 422 and nothing written; forged refs and other tenants 404', async () => {
  const t = await newTenant();
  await shopWithMenu(t);
  const before = await cartsTotal(t);
  const bad = [
    { items: [{ sku: 'TEA', quantity: 0 }] },
    { items: [{ sku: 'TEA', quantity: -1 }] },
    { items: [{ sku: 'TEA', quantity: 1.5 }] },
    { items: [{ sku: 'COF', variant: 'Gigantic' }] },
    { items: [{ sku: 'COF', variant: 999999 }] },
    { items: [{ sku: 'COF', addons: ['Whipped cream'] }] },
    { items: [{ sku: 'TEA', price: 1 }] },
    { items: Array.from({ length: 10_000 }, () => ({ sku: 'TEA', quantity: 1 })) },
  ];
  for (const body of bad) {
    const r = await api('POST', '/api/v3/shop-links', t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${r.text.slice(0, 300)}`);
  }
  const sizeErr = await api('POST', '/api/v3/shop-links', t.token, { items: [{ sku: 'NOPE' }, { sku: 'COF', variant: 'Gigantic' }] });
  assert.ok(sizeErr.body.errors['items.1.variant'], sizeErr.text);
  assert.equal(await cartsTotal(t), before, 'nothing half-written');

  const mine = (await api('POST', '/api/v3/shop-links', t.token, { items: [{ sku: 'TEA' }] })).body.data;
  for (const forged of ['ZZZZ', 'ZZZZZZ', 'OOOOO', '0', '-1', '99999999999999999999', "A'--x", '%00']) {
    const r = await api('GET', `/api/v3/carts/${encodeURIComponent(forged)}`, t.token);
    assert.ok(r.status === 404 || r.status === 400, `${forged}: ${r.status}`);
  }
  const other = await newTenant();
  await shopWithMenu(other);
  for (const key of [String(mine.cart.id), mine.cart.ref]) {
    const r = await api('GET', `/api/v3/carts/${key}`, other.token);
    assert.equal(r.status, 404, r.text);
    assert.doesNotMatch(r.text, /TEA|Tea/);
  }
  assert.equal((await api('GET', '/api/v3/carts', other.token)).body.data.pagination.total, 0);
  // The page: a wrong key or a forged ref is 404 and shows nothing of the basket.
  const wrongKey = await http('GET', mine.link.replace(/\/[^/]+$/, '/AAAAAAAAAAAAAAAAAAAAAA'));
  assert.equal(wrongKey.status, 404);
  assert.doesNotMatch(wrongKey.text, /Tea/);
  const forgedRef = await http('GET', mine.link.replace(`/shop/${mine.cart.ref}/`, '/shop/ZZZZZ/'));
  assert.equal(forgedRef.status, 404);
});

test("a product's address in the shop: the page shows it, its form opens a basket on it; not offered there is 404", async () => {
  const t = await newTenant();
  const shop = (await api('POST', C, t.token, { name: 'Street Shop', default_currency: 'USD', channels: ['storefront'] })).body.data;
  const made = await api('POST', `${C}/${shop.id}/products`, t.token, { sku: 'MUG-1', name: 'Mug <i>', price: 1200 });
  assert.equal(made.status, 201, made.text);
  const page = await http('GET', `/shop/${shop.id}/p/MUG-1`);
  assert.equal(page.status, 200, page.text);
  assert.match(page.text, /Mug &lt;i&gt;/, 'the name is escaped');
  const before = await cartsTotal(t);
  assert.equal(await cartsTotal(t), before, 'showing the product opens no basket');
  const opened = await fetch(`${API_URL}/shop/${shop.id}/p/MUG-1`, {
    method: 'POST',
    body: '',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    redirect: 'manual',
  });
  assert.equal(opened.status, 303, await opened.text());
  const location = opened.headers.get('location') ?? '';
  assert.match(location, /\/shop\/[A-Za-z0-9]{5}\/[\w-]+\?product=\d+$/);
  assert.equal(await cartsTotal(t), before + 1);
  const basketPage = await http('GET', new URL(location).pathname + new URL(location).search);
  assert.equal(basketPage.status, 200);
  assert.match(basketPage.text, /Mug &lt;i&gt;/);
  for (const path of [`/shop/${shop.id}/p/NOPE`, `/shop/999999999/p/MUG-1`, '/shop/abc/p/MUG-1']) {
    const missing = await http('GET', path);
    assert.equal(missing.status, 404, path);
    // A product's page says so (it once said "Basket not found": the basket pages' refusal was shared).
    assert.match(missing.text, /Product not found/, path);
  }
  const hidden = (await api('POST', C, t.token, { name: 'Chat only', default_currency: 'USD', channels: [] })).body.data;
  await api('POST', `${C}/${hidden.id}/products`, t.token, { sku: 'MUG-1', name: 'Mug', price: 1200 });
  assert.equal((await http('GET', `/shop/${hidden.id}/p/MUG-1`)).status, 404, 'a shop not on the storefront shows nothing there');
});
