import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openShop, coffee as coffeeBody, tea as teaBody, form } from '../support/shop.js';
import { admin, api, newTenant } from '../support/stack.js';
import { cli } from '../support/admin-cli.js';

// The operator CLI over an account's shops, products, orders and baskets (issue 25, point 7): made
// through the account's API and the shop page, read through `npm run admin`, each answer the one
// the account's key gets; another account's ids are 404 and a malformed id a 404 naming the thing.

const C = '/api/v3/catalogues';

/** The answer's data, the command having succeeded. */
async function data(...args: string[]) {
  const r = await cli(...args);
  assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  return r.json.data;
}

/** A refusal: exit 1, the v3 error body on stdout, its message. */
async function refused(status: RegExp, message: RegExp, ...args: string[]) {
  const r = await cli(...args);
  assert.equal(r.code, 1, `${args.join(' ')} exits 1`);
  assert.equal(r.json?.status, 'error', args.join(' '));
  assert.match(r.json.message, message, args.join(' '));
  assert.match(r.stderr, status, args.join(' '));
}

/** A shop with coffee and tea, an order (a basket of two teas submitted on the shop page) and an open basket. */
async function commerce() {
  const t = await newTenant();
  const { shop, product } = await openShop(t, 'Operator Café');
  const coffee = await product(coffeeBody());
  const tea = await product(teaBody);
  const ordered = await api('POST', '/api/v3/shop-links', t.token, { items: [{ sku: 'TEA', quantity: 2 }] });
  assert.equal(ordered.status, 201, ordered.text);
  const submitted = await form(ordered.body.data.link, '/submit', '');
  assert.equal(submitted.status, 303, submitted.text);
  const orderId = (await api('GET', `/api/v3/carts/${ordered.body.data.cart.ref}`, t.token)).body.data.order_id;
  assert.ok(orderId, 'the submitted basket names its order');
  const open = await api('POST', '/api/v3/shop-links', t.token, { items: [{ sku: 'COF', variant: 'large', quantity: 1 }] });
  assert.equal(open.status, 201, open.text);
  return { t, shop, coffee, tea, orderId: String(orderId), basket: open.body.data.cart };
}

test('the operator CLI reads an account’s shops, products, orders and baskets: the answers its key gets', async () => {
  const { t, shop, coffee, tea, orderId, basket } = await commerce();
  const customer = async (path: string) => {
    const r = await api('GET', path, t.token);
    assert.equal(r.status, 200, `${path}: ${r.text}`);
    return r.body.data;
  };
  const account = String(t.accountId);
  const shopId = String(shop.id);

  const shops = await data('shops:list', '--account', account);
  assert.deepEqual(shops, await customer(C));
  assert.deepEqual(
    shops.catalogues.map((s: any) => s.id),
    [shop.id],
  );
  assert.deepEqual(await data('shops:list', '--account', t.accountUid), shops, 'the account by its acc_… uid');
  assert.deepEqual(await data('shops:show', '--account', account, '--shop', shopId), await customer(`${C}/${shopId}`));

  const products = await data('products:list', '--account', account, '--shop', shopId);
  assert.deepEqual(products, await customer(`${C}/${shopId}/products`));
  assert.deepEqual(
    products.products.map((p: any) => p.sku),
    ['COF', 'TEA'],
  );
  const teas = await data('products:list', '--account', account, '--shop', shopId, '--search', 'tea', '--per-page', '5');
  assert.deepEqual(
    teas.products.map((p: any) => p.id),
    [tea.id],
  );
  assert.equal(teas.pagination.per_page, 5);
  const product = await data('products:show', '--account', account, '--shop', shopId, '--product', String(coffee.id));
  assert.deepEqual(product, await customer(`${C}/${shopId}/products/${coffee.id}`));
  assert.deepEqual(
    product.variants.map((v: any) => v.name),
    ['Small', 'Large'],
  );

  const orders = await data('orders:list', '--account', account);
  assert.deepEqual(orders, await customer(`${C}/orders`));
  assert.deepEqual(
    orders.orders.map((o: any) => String(o.id)),
    [orderId],
  );
  const filtered = await data('orders:list', '--account', account, '--shop', shopId, '--status', 'pending', '--platform', 'storefront');
  assert.deepEqual(
    filtered.orders.map((o: any) => String(o.id)),
    [orderId],
  );
  assert.equal((await data('orders:list', '--account', account, '--status', 'shipped')).orders.length, 0);
  const order = await data('orders:show', '--account', account, '--order', orderId);
  assert.deepEqual(order, await customer(`${C}/orders/${orderId}`));
  assert.deepEqual(
    order.product_items.map((l: any) => [l.product_retailer_id, l.quantity, l.item_price]),
    [['TEA', 2, 150]],
  );

  const baskets = await data('baskets:list', '--account', account);
  assert.deepEqual(baskets, await customer('/api/v3/carts'));
  assert.equal(baskets.carts.length, 2);
  const open = await data('baskets:list', '--account', account, '--status', basket.status);
  assert.deepEqual(
    open.carts.map((c: any) => c.ref),
    [basket.ref],
  );
  const read = await data('baskets:show', '--account', account, '--basket', basket.ref.toLowerCase());
  assert.deepEqual(read, await customer(`/api/v3/carts/${basket.ref}`));
  assert.deepEqual(await data('baskets:show', '--account', account, '--basket', String(basket.id)), read, 'by its id too');
});

test('the operator moves an order’s status as the account’s key would; a foreign account’s ids are 404; bad ids and statuses are refused clearly', async () => {
  const { t, shop, coffee, orderId, basket } = await commerce();
  const other = await newTenant();
  const foreign = String(other.accountId);
  const shopId = String(shop.id);

  // The other account names none of them: the same 404 as its own key would get.
  await refused(/answered 404/, /^Catalogue not found/, 'shops:show', '--account', foreign, '--shop', shopId);
  await refused(/answered 404/, /^Catalogue not found/, 'products:list', '--account', foreign, '--shop', shopId);
  await refused(
    /answered 404/,
    /^Catalogue not found/,
    'products:show',
    '--account',
    foreign,
    '--shop',
    shopId,
    '--product',
    String(coffee.id),
  );
  await refused(/answered 404/, /^Order not found/, 'orders:show', '--account', foreign, '--order', orderId);
  await refused(/answered 404/, /^Order not found/, 'orders:status', '--account', foreign, '--order', orderId, '--status', 'cancelled');
  await refused(/answered 404/, /^Cart not found/, 'baskets:show', '--account', foreign, '--basket', basket.ref);
  assert.equal((await data('orders:list', '--account', foreign)).orders.length, 0);
  assert.equal((await data('baskets:list', '--account', foreign)).carts.length, 0);
  assert.equal((await data('shops:list', '--account', foreign)).catalogues.length, 0);
  assert.equal((await api('GET', `${C}/orders/${orderId}`, t.token)).body.data.status, 'pending', 'the foreign move changed nothing');

  // Ids that name nothing: 404 naming the thing, at the HTTP door and on the command line.
  const account = String(t.accountId);
  await refused(/answered 404/, /^Order not found/, 'orders:show', '--account', account, '--order', 'abc');
  await refused(/answered 404/, /^Product not found/, 'products:show', '--account', account, '--shop', shopId, '--product', '1x');
  await refused(/answered 404/, /^Cart not found/, 'baskets:show', '--account', account, '--basket', 'not-a-ref');
  await refused(/answered 404/, /^Account not found/, 'shops:list', '--account', '99999999');
  await refused(/answered 404/, /^Account not found/, 'orders:list', '--account', 'acc_nobody');
  assert.equal((await admin('GET', `/accounts/${account}/orders/${orderId}x`)).status, 404);
  // A status the order cannot take: the CLI names the statuses (exit 2); the HTTP door answers 422 naming the field.
  const bad = await cli('orders:status', '--account', account, '--order', orderId, '--status', 'lost');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--status must be one of pending, confirmed, .* not 'lost'/);
  const badHttp = await admin('PUT', `/accounts/${account}/orders/${orderId}/status`, { status: 'lost' });
  assert.equal(badHttp.status, 422, badHttp.text);
  assert.ok(badHttp.body.errors.status, badHttp.text);
  const badFilter = await admin('GET', `/accounts/${account}/orders?status=lost`);
  assert.equal(badFilter.status, 422, badFilter.text);

  // The move itself (through set_order_status' service): the answer is the order as its key then reads it.
  const moved = await data('orders:status', '--account', account, '--order', orderId, '--status', 'cancelled');
  assert.equal(moved.status, 'cancelled');
  assert.deepEqual(moved, (await api('GET', `${C}/orders/${orderId}`, t.token)).body.data);
  assert.deepEqual(await data('orders:show', '--account', account, '--order', orderId), moved);
});
