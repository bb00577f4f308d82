import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { API_URL, admin, api, eventually, newTenant, sim, uniquePhone, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

// The public storefront cannot be hoarded (issue 23, point 2) and a suspended account's shop is
// closed (point 3): the shop's quantity caps on every basket door, the checkout window of an
// anonymous order's holds, the per-address hourly limits on baskets and orders (each visitor a
// loopback address of its own: 127.0.0.2, 127.0.0.3), and the closed page of a suspended account.

const C = '/api/v3/catalogues';
const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());

interface PageAnswer {
  status: number;
  text: string;
  location: string | null;
  retryAfter: string | null;
}

/**
 * A visitor of the shop page from its own client address (node:http binds the local address; any
 * 127/8 address reaches the loopback listener), redirects not followed.
 */
function visitor(address: string, base = API_URL) {
  const go = (method: 'GET' | 'POST', path: string, body = '') =>
    new Promise<PageAnswer>((resolve, reject) => {
      const url = new URL(path, base);
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method,
          localAddress: address,
          headers: { accept: 'text/html', ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              text,
              location: res.headers.location ?? null,
              retryAfter: (res.headers['retry-after'] as string | undefined) ?? null,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(method === 'POST' ? body : undefined);
    });
  return {
    get: (path: string) => go('GET', path),
    post: (path: string, body = '') => go('POST', path, body),
    /** Opens a basket on the product page: its page path (ref and key), or the refusal. */
    async open(shopId: number, sku: string) {
      const r = await go('POST', `/shop/${shopId}/p/${sku}`);
      return { ...r, basket: r.location ? new URL(r.location, base).pathname : null };
    },
  };
}

async function storefront(t: Tenant, settings: Record<string, unknown>, inventory = 20) {
  const shop = (await api('POST', C, t.token, { name: 'Street Shop', default_currency: 'USD', channels: ['storefront'], ...settings })).body
    .data;
  const made = await api('POST', `${C}/${shop.id}/products`, t.token, { sku: 'MUG', name: 'Mug', price: 1200, inventory });
  assert.equal(made.status, 201, made.text);
  return { shop, product: made.body.data };
}
const stock = async (productId: number) =>
  (await one<{ inventory: number; reserved: number }>(orm.em.fork(), 'select inventory, reserved from products where id = ?', [
    productId,
  ]))!;
const cartsOf = async (shopId: number) =>
  Number((await one<{ n: string }>(orm.em.fork(), 'select count(*) as n from carts where catalogue_id = ?', [shopId]))!.n);
const ordersOf = async (shopId: number) =>
  Number((await one<{ n: string }>(orm.em.fork(), 'select count(*) as n from orders where catalogue_id = ?', [shopId]))!.n);

test("the shop's quantity caps hold on the page, on shop links and again at submit", async () => {
  const t = await newTenant();
  const { shop, product } = await storefront(t, { max_line_quantity: 5, max_basket_quantity: 8 });
  assert.deepEqual([shop.max_line_quantity, shop.max_basket_quantity, shop.checkout_hold_minutes], [5, 8, 15]);
  const v = visitor('127.0.0.2');
  const { basket } = await v.open(shop.id, 'MUG');
  assert.ok(basket);
  const add = (q: number) => v.post(`${basket}/items`, `product_id=${product.id}&quantity=${q}`);

  const whole = await add(20);
  assert.equal(whole.status, 422, 'the whole inventory in one line');
  assert.match(whole.text, /at most 5 of one item per line/);
  assert.equal((await add(5)).status, 303);
  const over = await add(4);
  assert.equal(over.status, 422, 'the basket past its cap');
  assert.match(over.text, /at most 8 items in all/);
  assert.equal((await add(3)).status, 303);

  // A shop link is held to the same caps (the JSON envelope, naming the line).
  const link = await api('POST', '/api/v3/shop-links', t.token, { catalogue_id: shop.id, items: [{ sku: 'MUG', quantity: 6 }] });
  assert.equal(link.status, 422, link.text);
  assert.deepEqual(Object.keys(link.body.errors), ['items.0.quantity']);

  // Lowered after the basket was filled: the submit is refused whole and holds nothing.
  assert.equal((await api('PATCH', `${C}/${shop.id}`, t.token, { max_basket_quantity: 6 })).status, 200);
  const refused = await v.post(`${basket}/submit`);
  assert.equal(refused.status, 422);
  assert.deepEqual(await stock(product.id), { inventory: 20, reserved: 0 });
  assert.equal(await ordersOf(shop.id), 0);
  assert.equal((await api('PATCH', `${C}/${shop.id}`, t.token, { max_basket_quantity: 8 })).status, 200);
  assert.equal((await v.post(`${basket}/submit`)).status, 303);
  assert.deepEqual(await stock(product.id), { inventory: 20, reserved: 8 }, 'one visitor holds at most the basket cap');
  const order = await one<{ hold_window: number }>(
    orm.em.fork(),
    'select extract(epoch from hold_expires_at - created_at)::int as hold_window from orders where catalogue_id = ?',
    [shop.id],
  );
  assert.equal(order!.hold_window, 15 * 60, 'an order from the anonymous page holds for the checkout window, not 48 hours');
  assert.equal((await v.get(`/shop/${shop.id}/p/MUG`)).status, 200, 'the product stays on sale for others');
});

test('a basket the shop sent into a chat has a known customer: its order holds for the full TTL', async () => {
  const t = await newTenant();
  const phoneNumberId = `31${t.accountId}${Date.now() % 100000}`;
  const number = `+2553${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  const wa = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(wa.status, 201, wa.text);
  const { shop } = await storefront(t, { reservation_ttl_hours: 48 });
  const customer = uniquePhone('2556');
  const inbound = await sim('POST', '/_sim/whatsapp/inbound', {
    from: customer.replace('+', ''),
    phone_number_id: phoneNumberId,
    text: 'hi',
  });
  assert.equal(inbound.body.delivered, true, JSON.stringify(inbound.body));
  await eventually(
    () => api('GET', '/api/v3/messages?direction=inbound', t.token),
    (x) => x.body.data.messages.length === 1,
  );
  const r = await api('POST', '/api/v3/shop-links', t.token, { catalogue_id: shop.id, to: customer, items: [{ sku: 'MUG', quantity: 2 }] });
  assert.equal(r.status, 201, r.text);
  const v = visitor('127.0.0.2');
  assert.equal((await v.post(`${new URL(r.body.data.link).pathname}/submit`)).status, 303);
  const order = await one<{ hold_window: number }>(
    orm.em.fork(),
    'select extract(epoch from hold_expires_at - created_at)::int as hold_window from orders where catalogue_id = ?',
    [shop.id],
  );
  assert.equal(order!.hold_window, 48 * 3600);
});

test('one address: so many baskets and orders an hour (429, Retry-After); its holds lapse after the checkout window', async () => {
  // A stack of our own where a minute of checkout_hold_minutes is a second.
  const own = await privateStack({ CHECKOUT_HOLD_UNIT_SECONDS: '1' });
  try {
    const t = await newTenant();
    const settings = { max_line_quantity: 5, max_basket_quantity: 5, checkout_hold_minutes: 3 };
    const shop = (
      await api('POST', C, t.token, {
        name: 'Street Shop',
        default_currency: 'USD',
        channels: ['storefront'],
        ...settings,
        address_baskets_per_hour: 2,
        address_orders_per_hour: 1,
      })
    ).body.data;
    const product = (await api('POST', `${C}/${shop.id}/products`, t.token, { sku: 'MUG', name: 'Mug', price: 1200, inventory: 10 })).body
      .data;
    const hoarder = visitor('127.0.0.2', own.apiUrl);
    const other = visitor('127.0.0.3', own.apiUrl);

    // Every hold of the shop's orders: whose (order), how many, its state, and how long it was given.
    const holds = () =>
      many<{ order_id: string; quantity: number; status: string; hold_window: number }>(
        orm.em.fork(),
        `select h.order_id, h.quantity, h.status, extract(epoch from o.hold_expires_at - o.created_at)::int as hold_window
           from stock_holds h join orders o on o.id = h.order_id where o.catalogue_id = ? order by h.order_id`,
        [shop.id],
      );

    const first = await hoarder.open(shop.id, 'MUG');
    assert.equal(first.status, 303, first.text);
    assert.equal((await hoarder.post(`${first.basket}/items`, `product_id=${product.id}&quantity=5`)).status, 303);
    assert.equal((await hoarder.post(`${first.basket}/submit`)).status, 303);
    const [mine] = await holds();
    assert.deepEqual([mine.quantity, mine.hold_window], [5, 3], 'the basket cap, held for the checkout window');

    const second = await hoarder.open(shop.id, 'MUG');
    assert.equal(second.status, 303, 'the second basket of the hour');
    assert.equal((await hoarder.post(`${second.basket}/items`, `product_id=${product.id}&quantity=5`)).status, 303);
    const again = await hoarder.post(`${second.basket}/submit`);
    assert.equal(again.status, 429, 'one order an hour from this address');
    assert.ok(Number(again.retryAfter) > 0 && Number(again.retryAfter) <= 3600, `Retry-After ${again.retryAfter}`);
    assert.match(again.text, /id="error"/, 'the refusal is shown on the basket page');
    const third = await hoarder.open(shop.id, 'MUG');
    assert.equal(third.status, 429, 'two baskets an hour from this address');
    assert.ok(Number(third.retryAfter) > 0 && Number(third.retryAfter) <= 3600);
    assert.equal(await cartsOf(shop.id), 2, 'the refused basket was not opened');
    assert.equal(await ordersOf(shop.id), 1, 'the refused submit placed no order');
    assert.equal((await holds()).length, 1, 'and held nothing');

    // Another visitor still finds the product and can buy it.
    assert.equal((await other.get(`/shop/${shop.id}/p/MUG`)).status, 200);
    const theirs = await other.open(shop.id, 'MUG');
    assert.equal(theirs.status, 303);
    assert.equal((await other.post(`${theirs.basket}/items`, `product_id=${product.id}&quantity=2`)).status, 303);

    // The hoarder's hold lapses after the checkout window (3 "minutes" here), released by its workflow.
    await eventually(holds, (h) => h[0]?.status === 'expired', 60_000);
    assert.deepEqual(await stock(product.id), { inventory: 10, reserved: 0 });
    const bought = await other.post(`${theirs.basket}/submit`);
    assert.equal(bought.status, 303, bought.text);
    assert.deepEqual(
      (await holds()).map((h) => h.quantity),
      [5, 2],
    );
  } finally {
    await own.stop();
  }
});

test("a suspended account's shop is closed: no basket, no order, no stock held; reinstated it sells again", async () => {
  const t = await newTenant();
  const { shop, product } = await storefront(t, {}, 5);
  const v = visitor('127.0.0.2');
  const { basket } = await v.open(shop.id, 'MUG');
  assert.ok(basket);
  assert.equal((await v.post(`${basket}/items`, `product_id=${product.id}&quantity=2`)).status, 303);
  const carts = await cartsOf(shop.id);

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' })).status, 200);
  for (const r of [
    await v.get(`/shop/${shop.id}/p/MUG`),
    await v.post(`/shop/${shop.id}/p/MUG`),
    await v.get(basket!),
    await v.post(`${basket}/items`, `product_id=${product.id}&quantity=1`),
    await v.post(`${basket}/submit`),
  ]) {
    assert.equal(r.status, 403);
    assert.match(r.text, /This shop is closed/);
    assert.doesNotMatch(r.text, /Mug/, 'nothing of the shop is shown');
  }
  assert.equal(await cartsOf(shop.id), carts, 'no basket opened');
  assert.equal(await ordersOf(shop.id), 0, 'no order placed');
  assert.deepEqual(await stock(product.id), { inventory: 5, reserved: 0 }, 'no stock held');

  assert.equal((await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' })).status, 200);
  assert.equal((await v.get(`/shop/${shop.id}/p/MUG`)).status, 200);
  assert.equal((await v.post(`${basket}/submit`)).status, 303);
  assert.equal(await ordersOf(shop.id), 1);
  assert.deepEqual(await stock(product.id), { inventory: 5, reserved: 2 });
});
