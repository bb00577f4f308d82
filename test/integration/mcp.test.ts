import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { API_URL, admin, api, eventually, http, newTenant, uniquePhone, type Tenant } from '../support/stack.js';
import { MCP_SERVERS } from '../../api/operation.js';
import { inspector } from '../support/inspector.js';

// The MCP door against the real stack: the SDK's own client (both protocol eras), raw JSON-RPC
// for the transport's error codes, and the MCP Inspector CLI as a third-party client.

type Era = 'legacy' | 'auto';

async function mcpCredential(t: Tenant, opts: { expires_at?: string } = {}): Promise<{ id: number; token: string }> {
  const r = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId, ...opts });
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}

async function connect(token: string, endpoint = '/mcp', era: Era = 'legacy'): Promise<Client> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' }, { versionNegotiation: { mode: era } });
  const transport = new StreamableHTTPClientTransport(new URL(`${API_URL}${endpoint}`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

async function withClient<T>(token: string, endpoint: string, fn: (c: Client) => Promise<T>, era: Era = 'legacy'): Promise<T> {
  const client = await connect(token, endpoint, era);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const toolNames = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);

type CallResult = { isError?: boolean; structuredContent?: any; content: any[] };
const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<CallResult>;
/** The JSON body a refused call carries in its text block: the v3 error envelope. */
const refusal = (r: CallResult) => {
  assert.equal(r.isError, true, `expected a tool error, got ${JSON.stringify(r)}`);
  return JSON.parse(r.content.find((b) => b.type === 'text').text);
};

/** One raw JSON-RPC POST, as a client without the SDK would send it. */
function rpc(endpoint: string, token: string | null, body: unknown, headers: Record<string, string> = {}) {
  return http('POST', endpoint, {
    token,
    raw: typeof body === 'string' ? body : JSON.stringify(body),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
  });
}
const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

test('tools/list: /mcp lists every tool, each server only its own; both protocol eras see the same tools', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const all = await withClient(token, '/mcp', toolNames);
  for (const name of [
    'send_sms',
    'send_whatsapp_message',
    'get_sms',
    'get_whatsapp_message',
    'list_messages',
    'list_sms_senders',
    'list_whatsapp_accounts',
    'list_contact_groups',
    'create_contact_group',
    'get_contact_group',
    'rename_contact_group',
    'delete_contact_group',
    'import_contacts',
    'get_contact_import',
    'list_contacts',
    'create_contact',
    'get_contact',
    'update_contact',
    'delete_contact',
    'create_sms_campaign',
    'get_campaign',
    'resume_campaign',
    'get_profile',
    'get_balance',
    'list_automation_events',
    'list_automation_subscriptions',
    'list_automation_schedules',
    'run_operation',
  ]) {
    assert.ok(all.includes(name), `${name} is a tool on /mcp`);
  }
  assert.equal(new Set(all).size, all.length, 'tool names are unique');
  for (const name of all) assert.match(name, /^[A-Za-z0-9_.-]{1,64}$/);

  const messaging = await withClient(token, '/mcp/v1/messaging', toolNames);
  assert.ok(messaging.includes('send_sms') && messaging.includes('list_messages') && messaging.includes('get_campaign'));
  assert.ok(!messaging.includes('create_contact'), 'a contacts tool is not on the messaging server');
  const contacts = await withClient(token, '/mcp/v1/contacts', toolNames);
  assert.ok(contacts.includes('create_contact') && contacts.includes('list_contact_groups') && contacts.includes('get_contact_import'));
  assert.ok(!contacts.includes('send_sms'));

  const modern = await withClient(token, '/mcp/v1/messaging', toolNames, 'auto');
  assert.deepEqual(modern, messaging);

  const full = await withClient(token, '/mcp/v1/messaging', async (c) => (await c.listTools()).tools);
  const send = full.find((x) => x.name === 'send_sms')!;
  assert.match(send.description!, /SMS/);
  assert.equal(send.inputSchema.type, 'object');
  assert.equal((send.inputSchema.properties as any).recipient.maxLength, 4000, 'the input schema is the REST body schema, projected');
  assert.doesNotMatch(send.description!, /\n/, 'one line');
  assert.equal(send.outputSchema?.type, 'object', 'the shape of the structured answer');
  assert.ok((send.outputSchema?.properties as any).messages, 'send_sms answers {messages: [...]}');
  assert.deepEqual(send.annotations, { title: send.title, readOnlyHint: false, destructiveHint: false, openWorldHint: true });
});

test('send_sms over MCP: the message reads back through get_sms and over REST with the same shape', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const to = uniquePhone();
  const sent = await withClient(token, '/mcp/v1/messaging', (c) => call(c, 'send_sms', { recipient: to, message: 'hello over MCP' }));
  assert.notEqual(sent.isError, true, JSON.stringify(sent));
  const message = sent.structuredContent.messages[0];
  assert.equal(message.body, 'hello over MCP');
  assert.deepEqual(JSON.parse(sent.content[0].text), sent.structuredContent);

  const viaTool = await withClient(token, '/mcp', (c) => call(c, 'get_sms', { uid: message.uid }), 'auto');
  const viaRest = await api('GET', `/api/v3/sms/${message.uid}`, t.token);
  assert.equal(viaRest.status, 200);
  assert.equal(viaTool.structuredContent.uid, message.uid);
  assert.deepEqual(Object.keys(viaTool.structuredContent).sort(), Object.keys(viaRest.body.data).sort());
  const listed = await withClient(token, '/mcp', (c) => call(c, 'list_messages', { per_page: '5' }));
  assert.ok(listed.structuredContent.messages.some((m: any) => m.uid === message.uid));
});

test('contact group and contact created through tools read back over REST unchanged', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  await withClient(token, '/mcp/v1/contacts', async (c) => {
    const group = await call(c, 'create_contact_group', { name: 'MCP customers' });
    assert.notEqual(group.isError, true, JSON.stringify(group));
    const g = group.structuredContent;
    const contact = await call(c, 'create_contact', { group: g.uid, PHONE: uniquePhone(), name: 'Asha', city: 'Arusha' });
    assert.notEqual(contact.isError, true, JSON.stringify(contact));
    const k = contact.structuredContent;

    const restContact = await api('GET', `/api/v3/contact-groups/${g.uid}/contacts/${k.uid}`, t.token);
    assert.equal(restContact.status, 200);
    assert.deepEqual(restContact.body.data, k);
    const restGroup = await api('GET', `/api/v3/contact-groups/${g.uid}`, t.token);
    const toolGroup = await call(c, 'get_contact_group', { group: g.uid });
    assert.deepEqual(toolGroup.structuredContent, restGroup.body.data);
    const list = await call(c, 'list_contacts', { group: g.uid, search: 'Asha' });
    assert.deepEqual(
      list.structuredContent.contacts.map((x: any) => x.uid),
      [k.uid],
    );
    const updated = await call(c, 'update_contact', { group: g.uid, contact: k.uid, PHONE: k.full_phone_number, name: 'Asha M' });
    assert.notEqual(updated.isError, true, JSON.stringify(updated));
    assert.equal(updated.structuredContent.name, 'Asha M');
    const deleted = await call(c, 'delete_contact', { group: g.uid, contact: k.uid });
    assert.equal(deleted.structuredContent.deleted, true);
    assert.equal((await api('GET', `/api/v3/contact-groups/${g.uid}/contacts/${k.uid}`, t.token)).status, 404);
  });
});

test("a tour of today's families over MCP: every result matches the tool's advertised output schema", { timeout: 90_000 }, async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const op = await admin('POST', `/accounts/${t.accountId}/operations`, {
    name: 'order-in',
    kind: 'emit_business_event',
    config: { type: 'order.received' },
  });
  assert.equal(op.status, 201, op.text);
  // Under CHECK_ANSWERS the API holds each tool's answer to its operation's output schema (as for
  // REST), so a drift between a handler and its declared output schema fails the call here.
  await withClient(
    token,
    '/mcp',
    async (c) => {
      const ok = async (name: string, args: Record<string, unknown> = {}) => {
        const r = await call(c, name, args);
        assert.notEqual(r.isError, true, `${name}: ${JSON.stringify(r)}`);
        return r.structuredContent;
      };
      assert.equal((await ok('get_profile')).id, t.accountId);
      assert.equal((await ok('get_balance')).currency, 'USD');
      await ok('check_credential');
      await ok('list_sms_senders');
      await ok('list_whatsapp_accounts');

      const group = await ok('create_contact_group', { name: 'Tour' });
      assert.equal((await ok('rename_contact_group', { group: group.uid, name: 'Tour group' })).name, 'Tour group');
      const imported = await ok('import_contacts', {
        group: group.uid,
        contacts: [{ PHONE: uniquePhone(), name: 'One' }, { name: 'no phone' }],
      });
      const progress = await eventually(
        () => ok('get_contact_import', { group: group.uid, import: String(imported.id) }),
        (x) => x.status === 'completed',
        30_000,
      );
      assert.deepEqual([progress.created, progress.failed], [1, 1]);
      assert.equal((await ok('list_contact_groups', { search: 'Tour' })).groups[0].contacts_count, 1);

      const campaign = (await ok('create_sms_campaign', { contact_list_id: group.uid, message: 'Hi {{name}}' })).campaigns[0];
      assert.equal((await ok('get_campaign', { uid: campaign.uid })).uid, campaign.uid);
      const notPaused = refusal(await call(c, 'resume_campaign', { uid: campaign.uid }));
      assert.match(notPaused.message, /paused/i);

      const run = await ok('run_operation', { name: 'order-in', input: { data: { order_id: 7 } } });
      const done = await eventually(
        () => ok('get_operation_run', { run: run.run_id }),
        (x) => ['succeeded', 'failed'].includes(x.status),
        30_000,
      );
      assert.equal(done.status, 'succeeded');
      const events = await ok('list_automation_events', { limit: 5 });
      assert.ok(
        events.events.some((e: any) => e.type === 'order.received'),
        JSON.stringify(events),
      );
      await ok('list_automation_subscriptions');
      await ok('list_automation_schedules');
      assert.match(refusal(await call(c, 'run_operation', { name: 'no-such-operation' })).message, /not found/i);

      assert.equal((await ok('delete_contact_group', { group: group.uid })).deleted, true);
    },
    'auto',
  );
});

test('bad tool arguments answer a tool error with the problem of each field; the handler never runs', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  await withClient(token, '/mcp', async (c) => {
    const tooLong = refusal(await call(c, 'create_contact_group', { name: 'x'.repeat(161) }));
    assert.equal(tooLong.status, 'error');
    assert.deepEqual(Object.keys(tooLong.errors), ['name']);
    assert.match(tooLong.errors.name[0], /160 characters/);
    const wrongType = refusal(await call(c, 'send_sms', { recipient: uniquePhone(), message: 'x', recipients: 'not a list' }));
    assert.ok(wrongType.errors.recipients, JSON.stringify(wrongType));
    const noPath = refusal(await call(c, 'get_contact_group', {}));
    assert.deepEqual(noPath.errors, { group: ['The group field is required.'] });
    const badEnum = refusal(await call(c, 'list_messages', { status: 'lost' }));
    assert.ok(badEnum.errors.status);
  });
  const groups = await api('GET', '/api/v3/contact-groups', t.token);
  assert.deepEqual(groups.body.data.groups, [], 'nothing was created');
});

test('a plain tools/call is answered without the SDK exactly as the SDK answers it (api/mcp/server.ts plainToolCall)', async () => {
  const t = await newTenant({ permissions: ['contacts.view', 'contacts.create'] });
  const { token } = await mcpCredential(t);
  const group = (await api('POST', '/api/v3/contact-groups', t.token, { name: 'Plain' })).body.data;
  // The same call plainly, and with an empty `_meta`, which keeps it on the SDK's 2025-era leg.
  const both = async (endpoint: string, params: Record<string, unknown>, id: number | string, headers: Record<string, string> = {}) => {
    const plain = await rpc(endpoint, token, { jsonrpc: '2.0', id, method: 'tools/call', params }, headers);
    const sdk = await rpc(endpoint, token, { jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: {} } }, headers);
    assert.equal(plain.status, sdk.status, `${JSON.stringify(params)}: ${plain.text} / ${sdk.text}`);
    assert.match(plain.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(plain.body, sdk.body, JSON.stringify(params));
    return plain;
  };
  const read = await both('/mcp/v1/contacts', { name: 'get_contact_group', arguments: { group: group.id } }, 7);
  assert.equal(read.body.result.structuredContent.name, 'Plain');
  assert.equal(read.body.id, 7);
  await both('/mcp', { name: 'list_contact_groups' }, 'a-string-id', { 'mcp-protocol-version': '2025-06-18' });
  // A tool error (invalid arguments, a permission the issuer lacks), a tool this endpoint does not serve, nothing created.
  const invalid = await both('/mcp/v1/contacts', { name: 'create_contact_group', arguments: { name: 'x'.repeat(161) } }, 8);
  assert.equal(invalid.body.result.isError, true);
  const refused = await both('/mcp/v1/contacts', { name: 'delete_contact_group', arguments: { group: group.id } }, 9);
  assert.match(refused.body.result.content[0].text, /contacts\.delete/);
  const unknown = await both('/mcp/v1/contacts', { name: 'send_sms', arguments: {} }, 10);
  assert.equal(unknown.body.error.code, -32602);
  // What the plain path leaves to the SDK is still the SDK's answer: an unsupported protocol version, an Accept without event streams.
  const badVersion = await rpc(
    '/mcp',
    token,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_contact_groups' } },
    { 'mcp-protocol-version': '1999-01-01' },
  );
  assert.equal(badVersion.status, 400, badVersion.text);
  const jsonOnly = await rpc(
    '/mcp',
    token,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_contact_groups' } },
    { accept: 'application/json' },
  );
  assert.equal(jsonOnly.status, 406, jsonOnly.text);
  const groups = await api('GET', '/api/v3/contact-groups', t.token);
  assert.deepEqual(
    groups.body.data.groups.map((g: { name: string }) => g.name),
    ['Plain'],
  );
});

test("the issuer's permissions apply per tool: hidden from tools/list and refused on call", async () => {
  const t = await newTenant({ permissions: ['contacts.view'] });
  const { token } = await mcpCredential(t);
  await withClient(token, '/mcp/v1/contacts', async (c) => {
    const names = await toolNames(c);
    assert.ok(names.includes('list_contact_groups'));
    assert.ok(!names.includes('create_contact_group') && !names.includes('delete_contact'), JSON.stringify(names));
    const refused = refusal(await call(c, 'create_contact_group', { name: 'not allowed' }));
    assert.equal(refused.reason, 'permission_denied');
    assert.match(refused.message, /contacts\.create/);
  });
  // The automations reads need automations.view, which this issuer lacks; running an operation needs only a live issuer.
  assert.deepEqual(await withClient(token, '/mcp/v1/automations', toolNames), ['run_operation']);
});

test('an MCP credential follows its person: deactivated, it reads and sends nothing at the next request; a lost permission refuses its tools', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const user = (patch: Record<string, unknown>) => admin('PATCH', `/accounts/${t.accountId}/users/${t.userId}`, patch);
  const toolCall = (name: string, args: Record<string, unknown>) =>
    rpc('/mcp', token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });
  const sms = () => ({ recipient: uniquePhone(), message: 'from the assistant' });
  const sent = async () => (await api('GET', '/api/v3/messages?per_page=100', t.token)).body.data.messages.length;

  // A client connected while the issuer was active: its next calls are refused all the same.
  const c = await connect(token);
  try {
    assert.notEqual((await call(c, 'get_profile', {})).isError, true);
    assert.notEqual((await call(c, 'send_sms', sms())).isError, true);
    const before = await sent();

    assert.equal((await user({ active: false })).status, 200);
    await assert.rejects(call(c, 'get_profile', {}), /403|deactivated/);
    for (const [name, args] of [
      ['get_profile', {}],
      ['send_sms', sms()],
    ] as const) {
      const r = await toolCall(name, args);
      assert.equal(r.status, 403, r.text);
      assert.deepEqual(r.body, {
        status: 'error',
        message: 'The user who issued this MCP credential is deactivated.',
        reason: 'issuer_inactive',
      });
    }
    assert.equal((await rpc('/mcp', token, initialize)).status, 403, 'the connection itself is refused');
    assert.equal(await sent(), before, 'nothing was sent');
    // The REST key of the same person, for comparison: refused where an issuer is needed; the
    // original endpoints check only the account credential (the contract's rule for REST keys).
    assert.equal((await api('GET', '/api/v3/data/tables', t.token)).status, 403);
    assert.equal((await api('GET', '/api/v3/me', t.token)).status, 200);

    assert.equal((await user({ active: true })).status, 200);
    assert.equal((await call(c, 'get_profile', {})).structuredContent.id, t.accountId);
    assert.notEqual((await call(c, 'send_sms', sms())).isError, true);
    assert.equal(await sent(), before + 1);

    // The permission a send needs (communications.send) taken away: that tool is refused and hidden, reads still work.
    assert.equal((await user({ permissions: ['contacts.view'] })).status, 200);
    const refused = refusal(await call(c, 'send_sms', sms()));
    assert.equal(refused.reason, 'permission_denied');
    assert.match(refused.message, /communications\.send/);
    assert.notEqual((await call(c, 'get_profile', {})).isError, true);
    const names = await toolNames(c);
    assert.ok(!names.includes('send_sms') && names.includes('get_profile'), JSON.stringify(names));
    assert.equal(await sent(), before + 1, 'the refused send sent nothing');
    assert.equal((await user({ permissions: ['communications.send'] })).status, 200);
    assert.notEqual((await call(c, 'send_sms', sms())).isError, true);
  } finally {
    await c.close();
  }
  // An MCP credential is always some person's: one without an issuer is not issued.
  const orphan = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'nobody' });
  assert.equal(orphan.status, 422, orphan.text);
  assert.ok(orphan.body.errors.user_id, orphan.text);
});

test('tenant isolation: another account’s credential finds neither the message nor the contact', async () => {
  const a = await newTenant();
  const b = await newTenant();
  const tokenA = (await mcpCredential(a)).token;
  const tokenB = (await mcpCredential(b)).token;
  const { uid } = await withClient(
    tokenA,
    '/mcp',
    async (c) => (await call(c, 'send_sms', { recipient: uniquePhone(), message: 'private' })).structuredContent.messages[0],
  );
  const group = (await api('POST', '/api/v3/contact-groups', a.token, { name: 'A only' })).body.data;
  const contact = (await api('POST', `/api/v3/contact-groups/${group.uid}/contacts`, a.token, { PHONE: uniquePhone() })).body.data;
  await withClient(tokenB, '/mcp', async (c) => {
    assert.equal((await c.callTool({ name: 'get_sms', arguments: { uid } })).isError, true);
    const msg = refusal(await call(c, 'get_sms', { uid }));
    assert.match(msg.message, /not found/i);
    const k = refusal(await call(c, 'get_contact', { group: group.uid, contact: contact.uid }));
    assert.match(k.message, /not found/i);
    const listed = await call(c, 'list_messages', {});
    assert.ok(!listed.structuredContent.messages.some((m: any) => m.uid === uid));
  });
});

test('credentials: a REST key, a missing, revoked or expired credential are 401; a suspended account is 403', async () => {
  const t = await newTenant();
  const cred = await mcpCredential(t);
  assert.equal((await rpc('/mcp', cred.token, initialize)).status, 200);

  const rest = await rpc('/mcp', t.token, initialize);
  assert.equal(rest.status, 401);
  assert.equal(rest.body.status, 'error');
  // RFC 6750 (the MCP authorization spec's bearer rules): a sent credential that is wrong is invalid_token, with the reason.
  // Every 401 also names the endpoint's protected-resource metadata (RFC 9728 section 5.1), where an OAuth client starts.
  assert.equal(
    rest.headers.get('www-authenticate'),
    `Bearer realm="mcp", error="invalid_token", error_description="Unauthenticated.", resource_metadata="${API_URL}/.well-known/oauth-protected-resource/mcp"`,
  );
  const none = await rpc('/mcp/v1/messaging', null, initialize);
  assert.equal(none.status, 401);
  assert.equal(
    none.headers.get('www-authenticate'),
    `Bearer realm="mcp", resource_metadata="${API_URL}/.well-known/oauth-protected-resource/mcp/v1/messaging"`,
    'no credential sent: no error, only where to start',
  );
  const wrong = await rpc('/mcp', 'svc_mcp_' + 'x'.repeat(64), initialize);
  assert.equal(wrong.status, 401);
  assert.match(wrong.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  // The SDK client (no OAuth provider configured) surfaces the 401 with our plain message.
  await assert.rejects(
    connect('svc_mcp_' + 'x'.repeat(64)),
    (err: Error & { data?: { status?: number } }) => err.data?.status === 401 && /Unauthenticated\./.test(err.message),
  );

  const expired = await mcpCredential(t, { expires_at: new Date(Date.now() - 1000).toISOString() });
  const exp = await rpc('/mcp', expired.token, initialize);
  assert.equal(exp.status, 401);
  assert.equal(exp.body.message, 'API token has expired.');

  const revoked = await mcpCredential(t);
  assert.equal((await admin('DELETE', `/accounts/${t.accountId}/mcp-credentials/${revoked.id}`)).status, 200);
  const rev = await rpc('/mcp/v1/contacts', revoked.token, initialize);
  assert.equal(rev.status, 401);
  assert.equal(rev.body.message, 'API token has been revoked.');
  await assert.rejects(connect(revoked.token));

  await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' });
  try {
    const suspended = await rpc('/mcp', cred.token, initialize);
    assert.equal(suspended.status, 403);
    assert.deepEqual(suspended.body, { status: 'error', message: 'This account is suspended.', reason: 'account_suspended' });
  } finally {
    await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' });
  }
  assert.equal((await rpc('/mcp', cred.token, initialize)).status, 200);
  assert.ok((await rpc('/mcp', cred.token, initialize)).headers.get('x-ratelimit-remaining'), 'MCP requests are rate limited like REST');
});

test('server keys: an unknown key is 404; a server whose family is not built yet answers initialize and an empty tools/list', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const unknown = await rpc('/mcp/v1/nope', token, initialize);
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.status, 'error');
  for (const era of ['legacy', 'auto'] as const) {
    const info = await withClient(token, '/mcp/v1/ivr', async (c) => ({ server: c.getServerVersion(), tools: await toolNames(c) }), era);
    assert.equal(info.server?.name, 'svc-messaging-ivr');
    assert.deepEqual(info.tools, []);
  }
  const raw = await rpc('/mcp/v1/ivr', token, initialize);
  assert.equal(raw.status, 200);
  assert.match(raw.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(raw.headers.get('mcp-session-id'), null, 'stateless: no session is ever issued');
  assert.deepEqual(raw.body.result.capabilities.tools, { listChanged: false });
});

test('JSON-RPC errors: malformed JSON -32700, unknown method -32601, unknown tool -32602; GET and DELETE are 405', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const parse = await rpc('/mcp', token, '{"jsonrpc":"2.0","id":1,"method":');
  assert.equal(parse.body.error.code, -32700);
  const method = await rpc('/mcp/v1/messaging', token, { jsonrpc: '2.0', id: 2, method: 'no/such/method', params: {} });
  assert.equal(method.body.error.code, -32601);
  assert.equal(method.body.id, 2);
  const tool = await rpc('/mcp/v1/messaging', token, {
    jsonrpc: '2.0',
    id: 3,
    method: 'tools/call',
    params: { name: 'get_contact', arguments: {} },
  });
  assert.equal(tool.body.error.code, -32602, 'a tool of another server is unknown here');
  const list = await rpc('/mcp/v1/messaging', token, { jsonrpc: '2.0', id: 4, method: 'tools/list', params: {} });
  assert.equal(list.status, 200);
  assert.ok(list.body.result.tools.some((x: any) => x.name === 'send_sms'));
  for (const m of ['GET', 'DELETE']) {
    const r = await http(m, '/mcp', { token });
    assert.equal(r.status, 405, m);
    assert.equal(r.headers.get('allow'), 'POST');
  }
});

test('tools/list on /mcp, measured over the wire: every tool with its output schema in under 320 KB, the budget of test/unit/mcp-tools.test.ts', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const init = await rpc('/mcp', token, initialize);
  assert.equal(init.status, 200);
  const list = await rpc(
    '/mcp',
    token,
    { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
    { 'mcp-protocol-version': '2025-11-25' },
  );
  assert.equal(list.status, 200, list.text);
  const bytes = Buffer.byteLength(list.text);
  const tools = list.body.result.tools;
  process.stdout.write(`# tools/list on /mcp: ${tools.length} tools, ${bytes} bytes\n`);
  assert.ok(tools.length >= 80, `${tools.length} tools`);
  assert.ok(bytes < 320 * 1024, `${bytes} bytes`);
  for (const tool of tools) {
    assert.equal(tool.outputSchema?.type, 'object', tool.name);
    assert.doesNotMatch(tool.description, /\n/, tool.name);
    assert.ok(tool.description.length <= 200, tool.name);
    assert.equal(JSON.stringify(tool.inputSchema).includes('"type":['), false, `${tool.name}: no type union`);
  }
});

test('GET /api-docs/mcp.json lists every protocol version served: each 2025-era version initializes, the 2026-07-28 era negotiates', async () => {
  const m = (await http('GET', '/api-docs/mcp.json')).body;
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  assert.ok(m.protocolVersions.includes('2026-07-28') && m.protocolVersions.includes('2025-06-18'), m.protocolVersions.join());
  for (const version of m.protocolVersions.filter((v: string) => v < '2026-07-28')) {
    const r = await rpc('/mcp', token, { ...initialize, params: { ...initialize.params, protocolVersion: version } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.result.protocolVersion, version, 'a listed version is answered as itself');
  }
  const modern = await connect(token, '/mcp/v1/overview', 'auto');
  try {
    const negotiated = (modern.transport as StreamableHTTPClientTransport | undefined)?.protocolVersion;
    assert.ok(negotiated && negotiated >= '2026-07-28' && m.protocolVersions.includes(negotiated), String(negotiated));
  } finally {
    await modern.close();
  }
});

test('GET /api-docs/mcp.json: every server key with its path and tools, each tool with its schema, permission and scope', async () => {
  const r = await http('GET', '/api-docs/mcp.json');
  assert.equal(r.status, 200);
  const m = r.body;
  const keys = m.endpoints.filter((e: any) => e.key).map((e: any) => e.key);
  assert.deepEqual(keys, [...MCP_SERVERS]);
  assert.equal(keys.length, 31, 'the 31 keys the contract lists');
  for (const e of m.endpoints) assert.equal(e.path, e.key ? `/mcp/v1/${e.key}` : '/mcp');
  assert.deepEqual(m.endpoints.find((e: any) => e.key === 'ivr').tools, []);
  const byName = new Map<string, any>(m.tools.map((x: any) => [x.name, x]));
  assert.equal(byName.get('create_contact').permission, 'contacts.create');
  assert.equal(byName.get('create_contact').scope, 'mcp:contacts');
  assert.equal(byName.get('create_contact').elevation, 'mcp:write');
  assert.equal(byName.get('send_sms').permission, 'communications.send', "an MCP send acts with its person's permission to send");
  assert.equal(byName.get('send_sms').elevation, 'mcp:send');
  assert.equal(byName.get('list_automation_events').permission, 'automations.view');
  for (const tool of m.tools) {
    assert.equal(tool.inputSchema.type, 'object', tool.name);
    assert.equal(tool.outputSchema?.type, 'object', `${tool.name}: the output schema tools/list advertises`);
    assert.ok(tool.fullOutputSchema?.type, `${tool.name}: the manifest carries the full output schema`);
    assert.ok('permission' in tool && tool.scope && tool.servers.length, tool.name);
    for (const key of tool.servers) assert.ok(m.endpoints.find((e: any) => e.key === key).tools.includes(tool.name));
  }
  assert.deepEqual(m.endpoints.find((e: any) => e.key === null).tools.sort(), [...byName.keys()].sort());
});

test('the MCP Inspector CLI lists the tools (no schema portability error) and calls one, in both eras', async () => {
  const t = await newTenant();
  const { token } = await mcpCredential(t);
  const common = ['--transport', 'http', '--header', `Authorization: Bearer ${token}`];
  const listed = await inspector([`${API_URL}/mcp/v1/overview`, ...common, '--method', 'tools/list']);
  assert.deepEqual(listed.tools.map((x: any) => x.name).sort(), ['get_balance', 'get_profile', 'list_notices']);
  // --strict exits 6 when any tool schema has an error-severity portability problem, and reports
  // every finding (warnings too) in the JSON; there were about 1,150 warnings before the projection.
  const all = await inspector([`${API_URL}/mcp`, ...common, '--method', 'tools/list', '--strict', '--protocol-era', 'modern'], true);
  assert.ok(all.result.tools.some((x: any) => x.name === 'send_sms'));
  assert.deepEqual(all.schemaFindings ?? [], [], 'no portability warning on any tool');

  const group = await inspector([
    `${API_URL}/mcp/v1/contacts`,
    ...common,
    '--method',
    'tools/call',
    '--tool-name',
    'create_contact_group',
    '--tool-arg',
    'name=Inspector group',
  ]);
  assert.notEqual(group.isError, true, JSON.stringify(group));
  assert.equal(group.structuredContent.name, 'Inspector group');
  const rest = await api('GET', `/api/v3/contact-groups/${group.structuredContent.uid}`, t.token);
  assert.equal(rest.body.data.name, 'Inspector group');
});
