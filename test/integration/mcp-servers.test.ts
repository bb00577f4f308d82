import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { MCP_SERVERS, type McpServerKey, type Operation } from '../../api/operation.js';
import { emptyServerNote, operationsOf, toolOf, toolOperations } from '../../api/mcp/tools.js';
import { makeAjv } from '../../services/platform/validation.js';
import { API_URL, admin, api, eventually, http as request, newTenant, uniquePhone, type Tenant } from '../support/stack.js';
import { addWaNumber } from '../support/groups.js';
import { coffee, form, openShop, tea } from '../support/shop.js';

// Every server filled, and tenants apart on every tool (issue 27, points 5 and 7), against the real
// stack through the official MCP SDK client:
// - every read tool on every server it is on, in both protocol eras, on an account holding one of
//   every resource: the client checks each structuredContent against the tool's advertised
//   outputSchema (and throws when it does not fit), and the test checks it again itself;
// - every server the contract does not fill answers initialize and an empty tools/list, and says why;
// - every tool that takes a resource id, on every server it is on, called by another account with
//   the first account's ids: a not-found tool error, nothing of the first account in any answer,
//   nothing of it changed. The tools are read from the registry (a new one is covered as it
//   appears); the few whose ids sit in the body are a table here, and a tool in neither fails.

// ---------------------------------------------------------------------------------------------
// One account with one of everything (A), and the other account (B) that asks for it.

/** Written into A's names, so any answer that carries A's data shows it. */
const MARK = `tenant-a-${randomUUID().slice(0, 8)}`;

interface Refs {
  sms: string;
  whatsapp: string;
  operation: string;
  run: string;
  contactGroup: string;
  contact: string;
  contactImport: string;
  campaign: string;
  catalogue: string;
  product: string;
  sku: string;
  sync: string;
  feed: string;
  order: string;
  cart: string;
  table: string;
  record: string;
  dataGroup: string;
  chatGroup: string;
  payment: string;
  subjectId: string;
  /** A's own (custom) occasion's key. */
  occasion: string;
  /** A's message template (submitted for review on A's WABA). */
  template: string;
  /** A's WhatsApp business account (WABA). */
  waba: string;
  /** A's WhatsApp number's provider phone-number id: the sender_id of chat sends and groups. */
  waSender: string;
  smsSender: string;
  conversation: string;
  lead: string;
  /** A label of A's lead (a path parameter of remove_lead_label). */
  label: string;
  /** A's lead's phone number: B's upsert of it makes B's own lead. */
  leadPhone: string;
  /** A's draft post's uid. */
  post: string;
  /** The platform A has a connection to (a path parameter of the post connection tools). */
  platform: string;
  /** A's flow (published) and a live session of it. */
  flow: string;
  flowSession: string;
  /** A's published form, its version and a session of it. */
  form: string;
  formVersion: string;
  formSession: string;
}

/**
 * The resource each path parameter names, keyed by the path segment before it and the parameter
 * (`sms/{uid}`, `groups/{id}`), which tells apart the parameters that share a name. A tool with a
 * parameter missing here fails with the key to add.
 */
const REF_OF_PARAM: Record<string, keyof Refs> = {
  'sms/{uid}': 'sms',
  'whatsapp/{uid}': 'whatsapp',
  'operations/{name}': 'operation',
  'runs/{run}': 'run',
  'contact-groups/{group}': 'contactGroup',
  'contacts/{contact}': 'contact',
  'imports/{import}': 'contactImport',
  'campaign/{uid}': 'campaign',
  'catalogues/{catalogue}': 'catalogue',
  'products/{product}': 'product',
  'by-sku/{product_sku}': 'sku',
  'by-sku/{sku}': 'sku',
  'syncs/{sync}': 'sync',
  'feeds/{feed}': 'feed',
  'orders/{order}': 'order',
  'carts/{ref}': 'cart',
  'tables/{table}': 'table',
  'records/{record}': 'record',
  'groups/{group}': 'dataGroup',
  'groups/{id}': 'chatGroup',
  'payments/{payment}': 'payment',
  'occasions/{key}': 'occasion',
  'templates/{id}': 'template',
  'leads/{lead}': 'lead',
  'labels/{label}': 'label',
  'posts/{uid}': 'post',
  'connections/{platform}': 'platform',
  'flows/{id}': 'flow',
  // A flow's and a form's sessions share the segment: the parameter before it tells them apart.
  '{id}/sessions/{session}': 'flowSession',
  'forms/{form}': 'form',
  'versions/{version}': 'formVersion',
  '{form}/sessions/{session}': 'formSession',
};

/** The tool's path parameters filled with A's resources. */
function pathArgs(op: Operation, refs: Refs): Record<string, string> {
  const args: Record<string, string> = {};
  const segments = op.path.split('/');
  for (const [i, segment] of segments.entries()) {
    const param = /^\{(\w+)\}$/.exec(segment)?.[1];
    if (!param || i === 0) continue;
    const key = `${segments[i - 1]}/${segment}`;
    // The parameter before the segment tells apart paths that share it (a flow's and a form's sessions).
    const ref = (i > 1 && REF_OF_PARAM[`${segments[i - 2]}/${key}`]) || REF_OF_PARAM[key];
    assert.ok(ref, `${op.name}: no resource for the path parameter ${key}; add it to REF_OF_PARAM`);
    args[param] = refs[ref];
  }
  assert.deepEqual(Object.keys(args).sort(), [...op.params].sort(), op.name);
  return args;
}

// A local feed file for A's shop (the test stack allows loopback destinations).
const feedServer = http.createServer((_req, res) =>
  res.writeHead(200, { 'content-type': 'text/csv' }).end('id,title,price\nFEED-1,Feed item,500\n'),
);
await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', r));
const feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.csv`;
after(() => {
  feedServer.closeAllConnections();
  feedServer.close();
});

/** A fresh MCP credential of the tenant's full user: each has its own rate window (120 a minute in the stack). */
async function credential(t: Tenant): Promise<string> {
  const r = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(r.status, 201, r.text);
  return r.body.data.token;
}

/** Another REST key of the tenant's full user (the seeding and its waits spend more than one key's minute). */
async function restKey(t: Tenant): Promise<string> {
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'seed', user_id: t.userId });
  assert.equal(k.status, 201, k.text);
  return k.body.data.token;
}

async function created(method: string, path: string, token: string, body?: unknown) {
  const r = await api(method, path, token, body);
  assert.ok(r.status === 201 || r.status === 202 || r.status === 200, `${method} ${path}: ${r.status} ${r.text}`);
  return r.body.data;
}

async function seed(t: Tenant): Promise<Refs> {
  const key = t.token;
  const waitKey = await restKey(t);
  const { phoneNumberId } = await addWaNumber(t, '78');
  const smsSender = `A${String(t.accountId).padStart(7, '0')}`.slice(0, 11);
  const sender = await admin('POST', `/accounts/${t.accountId}/sender-ids`, { value: smsSender, approval_status: 'approved' });
  assert.equal(sender.status, 201, sender.text);

  const sms = (await created('POST', '/api/v3/sms/send', key, { recipient: uniquePhone(), message: `${MARK} sms` })).messages[0].uid;
  const customer = uniquePhone('2556');
  const whatsapp = (await created('POST', '/api/v3/whatsapp/send', key, { recipient: customer, message: `${MARK} chat` })).messages[0].uid;

  const operation = `op-${MARK}`;
  const op = await admin('POST', `/accounts/${t.accountId}/operations`, {
    name: operation,
    kind: 'emit_business_event',
    config: { type: 'order.received' },
  });
  assert.equal(op.status, 201, op.text);
  const run = (await created('POST', `/api/v3/operations/${operation}/run`, key, {})).run_id;

  const contactGroup = (await created('POST', '/api/v3/contact-groups', key, { name: `${MARK} group` })).uid;
  const contact = (
    await created('POST', `/api/v3/contact-groups/${contactGroup}/contacts`, key, { PHONE: uniquePhone(), name: `${MARK} contact` })
  ).uid;
  const contactImport = String(
    (
      await created('POST', `/api/v3/contact-groups/${contactGroup}/imports`, key, {
        contacts: [{ PHONE: uniquePhone(), name: `${MARK} imported` }],
      })
    ).id,
  );
  await eventually(
    () => api('GET', `/api/v3/contact-groups/${contactGroup}/imports/${contactImport}`, waitKey),
    (r) => r.body?.data?.status === 'completed',
    30_000,
    300,
    'the contact import completed',
  );
  const campaign = (await created('POST', '/api/v3/sms/campaign', key, { contact_list_id: contactGroup, message: `${MARK} campaign` }))
    .campaigns[0].uid;

  const { shop, product } = await openShop(t, `${MARK} shop`);
  const cof = await product(coffee({ name: `${MARK} coffee`, inventory: 50 }));
  await product({ ...tea, inventory: 50 });
  const feed = await created('POST', `/api/v3/catalogues/${shop.id}/feeds`, key, { url: feedUrl, mode: 'upsert' });
  await eventually(
    () => api('GET', `/api/v3/catalogues/${shop.id}/syncs/${feed.last_sync_id}`, waitKey),
    (r) => ['completed', 'failed'].includes(r.body?.data?.status),
    60_000,
    300,
    "the feed's first pull finished",
  );
  const link = await created('POST', '/api/v3/shop-links', key, { catalogue_id: shop.id, items: [{ sku: 'TEA', quantity: 2 }] });
  const submitted = await form(link.link, '/submit', `note=${MARK}`);
  assert.equal(submitted.status, 303, submitted.text);
  const cart = await eventually(
    async () => (await api('GET', `/api/v3/carts/${link.cart.ref}`, waitKey)).body.data,
    (c) => c?.status === 'ordered' && c.order_id,
    20_000,
    300,
    'the basket became an order',
  );

  const table = await admin('POST', `/accounts/${t.accountUid}/data/tables`, {
    name: `${MARK} table`,
    columns: [{ key: 'name', type: 'text' }],
  });
  assert.equal(table.status, 201, table.text);
  const record = await api('POST', `/api/v3/data/tables/${table.body.data.id}/records`, key, { data: { name: `${MARK} record` } });
  assert.equal(record.status, 201, record.text);
  const dataGroup = await admin('POST', `/accounts/${t.accountUid}/data/groups`, {
    name: `${MARK} data group`,
    table_ids: [table.body.data.id],
  });
  assert.equal(dataGroup.status, 201, dataGroup.text);

  const chatGroup = await created('POST', '/api/v3/whatsapp/groups', key, { subject: `${MARK} chat group`, sender_id: phoneNumberId });
  await eventually(
    () => api('GET', `/api/v3/whatsapp/groups/${chatGroup.id}`, waitKey),
    (r) => r.body?.data?.status === 'active',
    30_000,
    300,
    'the chat group became active',
  );

  const subjectId = `${MARK}-invoice`;
  const payment = await admin('POST', `/accounts/${t.accountId}/payments`, {
    subject_type: 'invoice',
    subject_id: subjectId,
    amount_minor: 10_000,
    currency: 'TZS',
  });
  assert.equal(payment.status, 201, payment.text);

  // A custom occasion (its key is A's own; every account has the catalogue's, such as the birthday).
  const occasion = `a-${MARK}`;
  await created('PUT', `/api/v3/occasions/${occasion}`, key, { kind: 'holiday', name: `${MARK} occasion`, date: '12-31' });

  // A message template on A's WABA (its body carries MARK: an answer holding it shows it).
  const template = await created('POST', '/api/v3/whatsapp/templates', key, {
    name: `a_${t.accountId}_greeting`,
    category: 'UTILITY',
    components: [{ type: 'BODY', text: `Hello {{1}}, ${MARK} here.`, example: { body_text: [['Ann']] } }],
  });

  const leadPhone = `+2557${uniquePhone('').slice(-8)}`;
  const lead = await created('POST', '/api/v3/leads', key, {
    phone: leadPhone,
    name: `${MARK} lead`,
    labels: ['vip'],
    note: `${MARK} note`,
  });

  // A's Facebook Page and a draft post to it (the page's name and the post's text carry MARK).
  await created('PUT', '/api/v3/posts/connections/facebook', key, {
    external_id: `${17_100_000_000 + t.accountId}`,
    access_token: 'EAAG-a-page-token',
    name: `${MARK} page`,
  });
  const post = await created('POST', '/api/v3/posts', key, { text: `${MARK} post`, platforms: ['facebook'] });
  // A's flow, published, with a session waiting for its customer's reply.
  const loaded = await admin('POST', `/accounts/${t.accountId}/flows`, {
    name: `${MARK} flow`,
    definition: { initial_state: 'wait', states: [{ name: 'wait', type: 'wait_for_reply', properties: { timeout_seconds: 86_400 } }] },
  });
  assert.equal(loaded.status, 201, loaded.text);
  const flow = String(loaded.body.data.id);
  await created('POST', `/api/v3/flows/${flow}/publish`, key, {});
  const flowSession = (await created('POST', `/api/v3/flows/${flow}/sessions`, key, { to: customer, parameters: { note: MARK } })).uid;

  const aForm = await created('POST', '/api/v3/forms', key, {
    name: `${MARK} form`,
    questions: [{ key: 'q', type: 'text', label: `${MARK}?` }],
  });
  await created('POST', `/api/v3/forms/${aForm.id}/publish`, key, {});
  const formSession = await created('POST', `/api/v3/forms/${aForm.id}/sends`, key, { to: customer, mode: 'questions' });

  return {
    post: post.uid,
    platform: 'facebook',
    form: aForm.id,
    formVersion: '1',
    formSession: formSession.id,
    sms,
    whatsapp,
    operation,
    run,
    contactGroup,
    contact,
    contactImport,
    campaign,
    catalogue: String(shop.id),
    product: String(cof.id),
    sku: cof.sku,
    sync: String(feed.last_sync_id),
    feed: String(feed.id),
    order: String(cart.order_id),
    cart: cart.ref,
    table: String(table.body.data.id),
    record: String(record.body.record.id),
    dataGroup: String(dataGroup.body.data.id),
    chatGroup: String(chatGroup.id),
    payment: payment.body.data.id,
    subjectId,
    occasion,
    template: String(template.id),
    waba: `WABA${t.accountId}`,
    waSender: phoneNumberId,
    smsSender,
    conversation: `whatsapp:${phoneNumberId}:${customer}`,
    lead: String(lead.id),
    label: 'vip',
    leadPhone,
    flow,
    flowSession,
  };
}

let world: Promise<{ a: Tenant; b: Tenant; refs: Refs }> | undefined;
const setup = () =>
  (world ??= (async () => {
    const [a, b] = await Promise.all([newTenant({ name: `${MARK} account` }), newTenant()]);
    // B has a WhatsApp number too, so a refusal of A's ids is never B lacking a channel.
    await addWaNumber(b, '79');
    return { a, b, refs: await seed(a) };
  })());

// ---------------------------------------------------------------------------------------------
// The SDK client.

type Era = 'legacy' | 'auto';
type CallResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

async function withClient<T>(token: string, server: McpServerKey, era: Era, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'servers-test', version: '1.0.0' }, { versionNegotiation: { mode: era } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp/v1/${server}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<CallResult>;
const textOf = (r: CallResult) => r.content.map((b) => b.text ?? '').join('\n');
const isRead = (op: Operation) => op.mcp!.annotations?.readOnlyHint === true;
const ajv = makeAjv({ allErrors: true, strict: false });

// ---------------------------------------------------------------------------------------------

test(
  'every read tool on every server it is on, both eras: structuredContent fits the advertised outputSchema',
  { timeout: 600_000 },
  async () => {
    const { a, refs } = await setup();
    const filled = MCP_SERVERS.filter((key) => operationsOf(key).length);
    let calls = 0;
    for (const server of filled) {
      const reads = operationsOf(server).filter(isRead);
      assert.ok(reads.length, `${server} has a read tool`);
      const token = await credential(a);
      for (const era of ['legacy', 'auto'] as const) {
        await withClient(token, server, era, async (c) => {
          // Listing first: the client keeps each tool's outputSchema and checks every later result against it.
          const tools = (await c.listTools()).tools;
          assert.deepEqual(
            tools.map((t) => t.name),
            operationsOf(server).map((op) => op.name),
            `${server}: every tool of the server (the full user may use them all)`,
          );
          for (const op of reads) {
            const tool = tools.find((t) => t.name === op.name)!;
            assert.equal(tool.outputSchema?.type, 'object', `${server} ${op.name}`);
            assert.deepEqual(tool.outputSchema, toolOf(op).outputSchema, `${server} ${op.name}`);
            const r = await call(c, op.name, pathArgs(op, refs));
            calls++;
            assert.notEqual(r.isError, true, `${server} ${era} ${op.name}: ${textOf(r)}`);
            assert.ok(r.structuredContent && typeof r.structuredContent === 'object', `${server} ${op.name}: structuredContent`);
            const valid = ajv.compile(tool.outputSchema!);
            assert.ok(valid(r.structuredContent), `${server} ${era} ${op.name}: ${JSON.stringify(valid.errors)}`);
            assert.deepEqual(JSON.parse(textOf(r)), r.structuredContent, `${op.name}: the text block is the same JSON`);
          }
        });
      }
    }
    assert.ok(calls >= 60, `${calls} read calls`);

    // The check is live: the client refuses a result that does not fit the output schema it holds.
    await withClient(await credential(a), 'overview', 'legacy', async (c) => {
      const strict = { ...toolOf(operationsOf('overview')[0]!), outputSchema: { type: 'object' as const, required: ['no_such_field'] } };
      await assert.rejects(
        c.callTool({ name: strict.name, arguments: {} }, { toolDefinition: strict }),
        /structured content|no_such_field/i,
      );
    });
  },
);

test(
  'a server whose family the contract does not describe answers initialize and an empty tools/list, and says why',
  { timeout: 180_000 },
  async () => {
    const { b } = await setup();
    const token = await credential(b);
    const manifest = (await request('GET', '/api-docs/mcp.json')).body;
    const empty = MCP_SERVERS.filter((key) => !operationsOf(key).length);
    assert.equal(empty.length, 15, empty.join());
    for (const [i, server] of empty.entries()) {
      const era: Era = i % 2 ? 'auto' : 'legacy';
      const seen = await withClient(token, server, era, async (c) => ({
        name: c.getServerVersion()?.name,
        instructions: c.getInstructions(),
        tools: (await c.listTools()).tools,
      }));
      assert.equal(seen.name, `svc-messaging-${server}`);
      assert.deepEqual(seen.tools, [], `${server}: no tools, and no error`);
      assert.equal(seen.instructions, emptyServerNote(server), server);
      const entry = manifest.endpoints.find((e: { key: string }) => e.key === server);
      assert.deepEqual(entry.tools, [], server);
      assert.match(entry.note, /^No tools: the contract /, server);
    }
    // A filled server carries no note and says what it serves.
    const shop = manifest.endpoints.find((e: { key: string }) => e.key === 'shop');
    assert.equal(shop.note, undefined);
    assert.ok(shop.tools.includes('get_order') && shop.tools.includes('create_shop_link'));
    assert.ok(
      manifest.endpoints.find((e: { key: string }) => e.key === 'orders').tools.includes('list_products'),
      'the Catalogue tag is on orders too',
    );
  },
);

// ---------------------------------------------------------------------------------------------
// Tenant isolation.

/** Bodies that pass validation, for tools with path parameters whose body has required fields, so the call reaches the lookup. */
const WRITE_BODIES: Record<string, (r: Refs) => Record<string, unknown>> = {
  create_contact: () => ({ PHONE: uniquePhone(), name: 'from B' }),
  update_contact: () => ({ PHONE: uniquePhone(), name: 'from B' }),
  rename_contact_group: () => ({ name: 'from B' }),
  import_contacts: () => ({ contacts: [{ PHONE: uniquePhone() }] }),
  push_inventory: (r) => ({ levels: [{ sku: r.sku, inventory: 1 }] }),
  set_order_status: () => ({ status: 'cancelled' }),
  update_catalogue: () => ({ name: 'from B' }),
  create_product: () => ({ name: 'from B', price: 100 }),
  put_product_by_sku: () => ({ name: 'from B', price: 100 }),
  update_product: () => ({ name: 'from B' }),
  sync_products: () => ({ products: [{ sku: 'FROM-B', name: 'from B', price: 100 }] }),
  create_catalogue_feed: () => ({ url: feedUrl }),
  update_catalogue_feed: () => ({ enabled: false }),
  create_data_record: () => ({ data: { name: 'from B' } }),
  update_data_record: () => ({ data: { name: 'from B' } }),
  invite_to_chat_group: () => ({ recipients: [uniquePhone()] }),
  approve_chat_group_join_requests: () => ({ join_requests: ['1'] }),
  reject_chat_group_join_requests: () => ({ join_requests: ['1'] }),
  remove_chat_group_participants: () => ({ participants: [uniquePhone()] }),
  send_chat_group_message: () => ({ message: 'from B' }),
  pin_chat_group_message: (r) => ({ message_uid: r.whatsapp, pin: true }),
  update_chat_group: () => ({ subject: 'from B' }),
  update_occasion: () => ({ message: 'from B' }),
  deploy_message_template: () => ({ business_account_id: 'WABA0' }),
  update_lead: () => ({ name: 'from B' }),
  change_lead_stage: () => ({ stage: 'contacted' }),
  assign_lead: () => ({ assignee_id: null }),
  add_lead_labels: () => ({ labels: ['from-b'] }),
  add_lead_note: () => ({ body: 'from B' }),
  merge_leads: (r) => ({ lead_id: Number(r.lead) }),
  update_post: () => ({ text: 'from B' }),
  schedule_post: () => ({ scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }),
  start_flow_session: () => ({ to: uniquePhone('2556') }),
  update_form: () => ({ name: 'from B' }),
  send_form: () => ({ to: uniquePhone('2556') }),
};

/**
 * Tools whose path names a key the caller chooses (a PUT that makes the resource when the key is
 * new): B's call with A's key makes B's own, holding nothing of A's, and A's is untouched. They run
 * after the other tools of their server, whose calls with the key must still find nothing.
 */
const CREATES_ITS_OWN: Record<string, (r: Refs) => Record<string, unknown>> = {
  set_occasion: () => ({ kind: 'holiday', name: 'from B', date: '01-02' }),
  // B's own Facebook connection: A's page and token untouched.
  set_post_connection: () => ({ external_id: '17199999999', access_token: 'EAAG-b-page-token', name: 'from B' }),
};

type Expect = 'not_found' | 'refused' | 'none_of_a';
/**
 * Tools without path parameters that still name a resource of the account, in their body or
 * query: called by B with A's, each must refuse it (not found, or a field refusal) or answer a
 * list holding nothing of A's.
 */
const BODY_REFERENCES: Record<string, { args: (r: Refs) => Record<string, unknown>; expect: Expect }> = {
  send_sms: { args: (r) => ({ recipient: uniquePhone(), message: 'from B', sender_id: r.smsSender }), expect: 'refused' },
  send_whatsapp_message: { args: (r) => ({ recipient: uniquePhone('2556'), message: 'from B', sender_id: r.waSender }), expect: 'refused' },
  create_sms_campaign: { args: (r) => ({ contact_list_id: r.contactGroup, message: 'from B' }), expect: 'not_found' },
  send_product: {
    args: (r) => ({ to: uniquePhone('2556'), catalogue_id: Number(r.catalogue), product_retailer_id: r.sku }),
    expect: 'not_found',
  },
  send_product_list: {
    args: (r) => ({
      to: uniquePhone('2556'),
      catalogue_id: Number(r.catalogue),
      header_text: 'B',
      body: 'B',
      sections: [{ title: 'B', product_items: [{ product_retailer_id: r.sku }] }],
    }),
    expect: 'not_found',
  },
  send_catalogue: { args: (r) => ({ to: uniquePhone('2556'), catalogue_id: Number(r.catalogue), body: 'B' }), expect: 'not_found' },
  create_shop_link: { args: (r) => ({ catalogue_id: Number(r.catalogue) }), expect: 'not_found' },
  list_orders: { args: (r) => ({ catalogue_id: Number(r.catalogue) }), expect: 'none_of_a' },
  list_carts: { args: (r) => ({ conversation_id: r.conversation }), expect: 'none_of_a' },
  list_payments: { args: (r) => ({ subject_id: r.subjectId }), expect: 'none_of_a' },
  list_chat_groups: { args: (r) => ({ sender_id: r.waSender }), expect: 'none_of_a' },
  update_occasion_defaults: { args: (r) => ({ contact_group_ids: [r.contactGroup] }), expect: 'refused' },
  create_chat_group: { args: (r) => ({ subject: 'from B', sender_id: r.waSender }), expect: 'refused' },
  create_message_template: {
    args: (r) => ({ business_account_id: r.waba, name: 'from_b', category: 'UTILITY', components: [{ type: 'BODY', text: 'from B' }] }),
    expect: 'refused',
  },
  list_message_templates: { args: (r) => ({ business_account_id: r.waba }), expect: 'none_of_a' },
  sync_message_templates: { args: (r) => ({ business_account_id: r.waba }), expect: 'refused' },
  // A's person upserted by B: B's own lead, holding nothing of A's lead.
  upsert_lead: { args: (r) => ({ phone: r.leadPhone, name: 'from B' }), expect: 'none_of_a' },
};

/** Tools that name no resource of the account (reads of the whole account, creations from nothing): B's reads of them must hold nothing of A's. */
const NO_RESOURCE_ID = [
  'get_profile',
  'get_balance',
  'check_credential',
  'list_sms_senders',
  'list_messages',
  'list_whatsapp_accounts',
  'list_automation_events',
  'list_automation_subscriptions',
  'list_automation_schedules',
  'list_contact_groups',
  'create_contact_group',
  'list_catalogues',
  'create_catalogue',
  'list_notices',
  'list_data_tables',
  'list_data_groups',
  'list_occasions',
  'get_occasion_defaults',
  'list_leads',
  'get_lead_settings',
  'update_lead_settings',
  'list_post_connections',
  'list_posts',
  'create_post',
  'list_flows',
  'create_form',
  'list_forms',
];

/** A refusal that a resource is not found: the v3 body's message, or the data envelope's code. */
function notFound(r: CallResult, what: string) {
  assert.equal(r.isError, true, `${what}: expected a tool error, got ${textOf(r).slice(0, 300)}`);
  const body = JSON.parse(textOf(r));
  const found = body.error?.code === 'not_found' || (/not found/i.test(body.message) && !body.errors);
  assert.ok(found, `${what}: not a not-found refusal: ${textOf(r)}`);
}

/** What A's resources read now, by A: their names, states and counts that a write by B could have moved. */
async function fingerprint(t: Tenant, r: Refs) {
  const get = async (path: string) => {
    const res = await api('GET', path, t.token);
    assert.equal(res.status, 200, `${path}: ${res.text}`);
    return res.body.data ?? res.body;
  };
  const C = `/api/v3/catalogues/${r.catalogue}`;
  // (Not A's message count: its campaign may still be sending.)
  const [
    group,
    contact,
    contacts,
    shop,
    product,
    products,
    feed,
    order,
    record,
    records,
    chat,
    payment,
    occasion,
    template,
    lead,
    post,
    page,
    flow,
    session,
  ] = await Promise.all([
    get(`/api/v3/contact-groups/${r.contactGroup}`),
    get(`/api/v3/contact-groups/${r.contactGroup}/contacts/${r.contact}`),
    get(`/api/v3/contact-groups/${r.contactGroup}/contacts`),
    get(C),
    get(`${C}/products/${r.product}`),
    get(`${C}/products`),
    get(`${C}/feeds/${r.feed}`),
    get(`/api/v3/catalogues/orders/${r.order}`),
    get(`/api/v3/data/tables/${r.table}/records/${r.record}`),
    get(`/api/v3/data/tables/${r.table}/records?with_count=true`),
    get(`/api/v3/whatsapp/groups/${r.chatGroup}`),
    get(`/api/v3/payments/${r.payment}`),
    get(`/api/v3/occasions/${r.occasion}`),
    get(`/api/v3/whatsapp/templates/${r.template}`),
    get(`/api/v3/leads/${r.lead}`),
    get(`/api/v3/posts/${r.post}`),
    get(`/api/v3/posts/connections/${r.platform}`),
    get(`/api/v3/flows/${r.flow}`),
    get(`/api/v3/flows/${r.flow}/sessions/${r.flowSession}`),
  ]);
  return {
    group: group.name,
    contact: [contact.name, contact.full_phone_number],
    contacts: contacts.contacts.length,
    shop: shop.name,
    product: [product.name, product.price, product.inventory],
    products: products.products.map((p: { sku: string }) => p.sku).sort(),
    feed: [feed.url, feed.enabled],
    order: order.status,
    record: record.record.data,
    records: records.count,
    chat: [chat.subject, chat.description, chat.invite_link],
    payment: [payment.amount_minor, payment.subject_id],
    occasion: [occasion.name, occasion.date, occasion.message],
    template: [template.name, template.business_account_id, template.components],
    lead: [lead.name, lead.stage, lead.labels, lead.assignee_id, lead.identities, lead.updated_at],
    post: [post.text, post.status, post.platforms, post.updated_at],
    page: [page.external_id, page.token_hint, page.name, page.updated_at],
    flow: [flow.status, flow.revision, flow.published_revision, flow.updated_at],
    session: [session.status, session.current_state, session.end_reason],
  };
}

test(
  "tenant isolation on every tool of every server: another account's ids are not found, nothing of it is read or changed",
  { timeout: 600_000 },
  async () => {
    const { a, b, refs } = await setup();

    // Every tool is placed: a path parameter (derived), a reference in the body (BODY_REFERENCES), or none (NO_RESOURCE_ID).
    for (const op of toolOperations) {
      const places = [op.params.length > 0, op.name in BODY_REFERENCES, NO_RESOURCE_ID.includes(op.name)].filter(Boolean).length;
      assert.equal(places, 1, `${op.name}: say how it names a resource (path parameter, BODY_REFERENCES or NO_RESOURCE_ID)`);
    }

    const before = await fingerprint(a, refs);
    let checked = 0;
    for (const server of MCP_SERVERS.filter((key) => operationsOf(key).length)) {
      const token = await credential(b);
      await withClient(token, server, checked % 2 ? 'auto' : 'legacy', async (c) => {
        await c.listTools();
        const ops = operationsOf(server);
        for (const op of [...ops.filter((o) => !(o.name in CREATES_ITS_OWN)), ...ops.filter((o) => o.name in CREATES_ITS_OWN)]) {
          const what = `${server} ${op.name}`;
          let r: CallResult;
          if (op.name in CREATES_ITS_OWN) {
            r = await call(c, op.name, { ...CREATES_ITS_OWN[op.name]!(refs), ...pathArgs(op, refs) });
            assert.notEqual(r.isError, true, `${what}: ${textOf(r).slice(0, 300)}`);
          } else if (op.params.length) {
            r = await call(c, op.name, { ...(WRITE_BODIES[op.name]?.(refs) ?? {}), ...pathArgs(op, refs) });
            notFound(r, what);
          } else if (op.name in BODY_REFERENCES) {
            const { args, expect } = BODY_REFERENCES[op.name]!;
            r = await call(c, op.name, args(refs));
            if (expect === 'not_found') notFound(r, what);
            else if (expect === 'refused') assert.equal(r.isError, true, `${what}: ${textOf(r).slice(0, 300)}`);
            else assert.notEqual(r.isError, true, `${what}: ${textOf(r).slice(0, 300)}`);
          } else if (isRead(op)) {
            r = await call(c, op.name, {});
            assert.notEqual(r.isError, true, `${what}: ${textOf(r).slice(0, 300)}`);
          } else continue;
          checked++;
          // Nothing of A's in any answer: its names carry MARK, and its ids are never echoed back as data
          // (but for the key B chose for its own).
          const own = (text: string) => (op.name in CREATES_ITS_OWN ? text.replaceAll(refs.occasion, '') : text);
          assert.ok(!own(textOf(r)).includes(MARK), `${what} answered A's data: ${textOf(r).slice(0, 300)}`);
          if (!r.isError) assert.ok(!own(JSON.stringify(r.structuredContent)).includes(MARK), what);
        }
      });
    }
    assert.ok(checked >= 100, `${checked} calls`);
    assert.deepEqual(await fingerprint(a, refs), before, "nothing of A's changed");
  },
);
