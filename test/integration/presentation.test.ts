import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { createOrder } from '../../services/orders/index.js';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { API_URL, admin, api, eventually, newTenant } from '../support/stack.js';
import { waTenant } from '../support/groups.js';

// One presentation rule (issue 23, point 8; docs/architecture.md): a single resource is answered as
// `data` itself in every family, wrapped only where the contract spells out a wrapper; a query
// boolean reads true, false, 1 and 0 everywhere and refuses anything else.
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(() => orm.close());
const em = () => orm.em.fork();
const G = '/api/v3/whatsapp/groups';

test('an order read or moved answers the order itself as data', async () => {
  const t = await newTenant();
  const shop = await one<{ id: number }>(
    em(),
    `insert into catalogues (account_id, name, channels, sku_prefix, stock_policy, reservation_ttl_hours, allow_backorders, default_currency, created_at, updated_at)
     values (?, 'Shop', '[]'::jsonb, 'SHOP', 'svc', 48, false, 'USD', now(), now()) returning id`,
    [t.accountId],
  );
  await one(
    em(),
    `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, inventory, reserved, created_at, updated_at)
     values (?, ?, 'A', 'Product A', 1000, 'USD', 'in stock', 5, 0, now(), now()) returning id`,
    [t.accountId, shop!.id],
  );
  const created = await em().transactional((tx) =>
    createOrder(tx, {
      accountId: t.accountId,
      catalogueId: shop!.id,
      platform: 'manual',
      customerHandle: '+15550001',
      lines: [{ retailerId: 'A', quantity: 2 }],
    }),
  );

  const read = await api('GET', `/api/v3/catalogues/orders/${created.orderId}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.status, 'success');
  assert.equal(read.body.data.id, created.orderId, `data is the order: ${read.text.slice(0, 200)}`);
  assert.equal(read.body.data.order, undefined);
  assert.equal(read.body.data.product_items[0].product_retailer_id, 'A');
  assert.equal(read.body.data.total_amount, 2000);

  // The MCP tool shares the handler: its structured content is the same order (the API checks it against the output schema under CHECK_ANSWERS).
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(cred.status, 201, cred.text);
  const client = new Client({ name: 'presentation-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp/v1/orders`), {
      requestInit: { headers: { Authorization: `Bearer ${cred.body.data.token}` } },
    }),
  );
  try {
    const tool = (await client.callTool({ name: 'get_order', arguments: { order: String(created.orderId) } })) as {
      structuredContent: unknown;
    };
    assert.deepEqual(tool.structuredContent, read.body.data);
  } finally {
    await client.close();
  }

  const moved = await api('PUT', `/api/v3/catalogues/orders/${created.orderId}/status`, t.token, { status: 'cancelled' });
  assert.equal(moved.status, 200, moved.text);
  assert.equal(moved.body.data.id, created.orderId);
  assert.equal(moved.body.data.status, 'cancelled');
});

test('a group message send answers the group message itself; an invite-link reset answers the group', async () => {
  const t = await waTenant('83');
  const made = await api('POST', G, t.token, { sender_id: t.phoneNumberId, subject: 'Presentation' });
  assert.equal(made.status, 201, made.text);
  const id = made.body.data.id as number;
  await eventually(
    () => one<{ status: string }>(em(), 'select status from chat_groups where id = ?', [id]),
    (g) => g!.status !== 'creating',
    30_000,
    250,
  );

  const sent = await api('POST', `${G}/${id}/messages`, t.token, { template: { name: 'hello_world', language: 'en_US' } });
  assert.equal(sent.status, 201, sent.text);
  assert.equal(sent.body.data.messages, undefined, `data is the message: ${sent.text.slice(0, 200)}`);
  assert.equal(sent.body.data.group_id, id);
  assert.equal(sent.body.data.direction, 'outbound');
  assert.match(sent.body.data.uid, /\S/);
  assert.ok(sent.body.data.gateway_message_id);

  const reset = await api('POST', `${G}/${id}/invite-link/reset`, t.token, {});
  assert.equal(reset.status, 200, reset.text);
  assert.equal(reset.body.data.id, id, `data is the group: ${reset.text.slice(0, 200)}`);
  assert.equal(reset.body.data.group, undefined);
  assert.match(reset.body.data.invite_link, /\S/);
});

test('a contact import answers the import itself', async () => {
  const t = await newTenant();
  const g = await api('POST', '/api/v3/contact-groups', t.token, { name: 'Imported' });
  assert.equal(g.status, 201, g.text);
  const started = await api('POST', `/api/v3/contact-groups/${g.body.data.id}/imports`, t.token, { contacts: [{ PHONE: '255711000001' }] });
  assert.equal(started.status, 202, started.text);
  assert.equal(started.body.data.import, undefined, `data is the import: ${started.text.slice(0, 200)}`);
  assert.ok(started.body.data.id);
  const read = await api('GET', `/api/v3/contact-groups/${g.body.data.id}/imports/${started.body.data.id}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.id, started.body.data.id);
});

test('query booleans read true, false, 1 and 0; anything else is 422', async () => {
  const t = await newTenant();
  const tab = await admin('POST', `/accounts/${t.accountUid}/data/tables`, { name: 'Flags', columns: [{ key: 'name', type: 'text' }] });
  assert.equal(tab.status, 201, tab.text);
  const records = `/api/v3/data/tables/${tab.body.data.id}/records`;
  for (const name of ['a', 'b']) assert.equal((await api('POST', records, t.token, { data: { name } })).status, 201);

  for (const [value, count] of [
    ['1', 2],
    ['true', 2],
    ['0', null],
    ['false', null],
  ] as const) {
    const r = await api('GET', `${records}?with_count=${value}`, t.token);
    assert.equal(r.status, 200, `with_count=${value}: ${r.text}`);
    assert.equal(r.body.count, count, `with_count=${value}`);
  }
  for (const value of ['yes', 'TRUE', '2', '']) {
    const r = await api('GET', `${records}?with_count=${value}`, t.token);
    assert.equal(r.status, 422, `with_count=${value}: ${r.text}`);
    assert.ok(r.body.errors?.with_count, r.text);
  }

  const shop = await api('POST', '/api/v3/catalogues', t.token, { name: 'Flags shop', default_currency: 'USD' });
  assert.equal(shop.status, 201, shop.text);
  const inventory = `/api/v3/catalogues/${shop.body.data.id}/inventory`;
  for (const value of ['1', '0', 'true', 'false'])
    assert.equal((await api('GET', `${inventory}?tracked_only=${value}`, t.token)).status, 200, `tracked_only=${value}`);
  assert.equal((await api('GET', `${inventory}?tracked_only=yes`, t.token)).status, 422);
});
