import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { API_URL, admin, api, http, newTenant } from '../support/stack.js';
import { toolNames } from '../support/mcp.js';
import { personWithPassword } from '../support/people.js';
import { connect, mcpInitialize, mcpRpc, resourceOf, token } from '../support/oauth.js';
import { cli } from '../support/admin-cli.js';
import { CAPABILITY_SCOPES, ELEVATION_SCOPES, MCP_SCOPES, PRE_TICKED_SCOPES } from '../../domain/oauth/index.js';

// Scopes that hold (issue 27, point 4), with tokens from the real flow (register, sign in, consent
// on the pages, code with PKCE): what a token opens is its ticked scopes intersected with what its
// person may do at each request, plus mcp:use; a tool that needs an elevation is listed and its
// call answered with the MCP authorization spec's step-up challenge; the operator lists an
// account's MCP connections (OAuth and svc_mcp_ alike) and ends one for the next request.

const CONTACTS = resourceOf('contacts');
const ALL = resourceOf(null);

interface ManifestTool {
  name: string;
  scope: string;
  elevation: string | null;
  permission: string | null;
  servers: string[];
}
const manifest = async () => (await http('GET', '/api-docs/mcp.json')).body;
const manifestTools = async (): Promise<ManifestTool[]> => (await manifest()).tools;

/** A raw tools/call: its HTTP status and challenge, and the tool result's refusal body when it is one. */
async function callRaw(endpoint: string, bearer: string, name: string, args: Record<string, unknown>) {
  const r = await mcpRpc(endpoint, bearer, 'tools/call', { name, arguments: args });
  const result = r.body?.result;
  const text = result?.content?.find((b: { type: string }) => b.type === 'text')?.text;
  return {
    status: r.status,
    challenge: r.headers.get('www-authenticate'),
    isError: result?.isError === true,
    refusal: result?.isError ? JSON.parse(text) : null,
    raw: r.text,
  };
}

const challengeFor = (path: string, scopes: string) =>
  `Bearer realm="mcp", error="insufficient_scope", scope="${scopes}", ` +
  `resource_metadata="${API_URL}/.well-known/oauth-protected-resource${path}", ` +
  `error_description="This connection was not granted a scope this request needs."`;

const groupsOf = async (t: { token: string }) => JSON.stringify((await api('GET', '/api/v3/contact-groups', t.token)).body);

test('the effective grant: ticked capabilities list their tools, the person’s permissions now bound them, mcp:use always', async () => {
  const who = await personWithPassword();
  const { tokens } = await connect(who, ALL, { scopes: ['mcp:contacts'] });
  assert.deepEqual(tokens.scope.split(' ').sort(), ['mcp:contacts', 'mcp:use']);

  const tools = await manifestTools();
  const contacts = tools.filter((t) => t.scope === 'mcp:contacts').map((t) => t.name);
  assert.ok(contacts.includes('create_contact_group') && contacts.includes('list_contact_groups'));
  // Every tool of the granted capability, the elevation-needing ones too (docs/security.md: listed, stepped up on call); no other.
  assert.deepEqual((await toolNames(null, tokens.access_token)).sort(), [...contacts].sort());

  // Another capability's tool is not listed, and its call asks for that capability (step-up), running nothing.
  const profile = await callRaw('/mcp', tokens.access_token, 'get_profile', {});
  assert.equal(profile.status, 403, profile.raw);
  assert.equal(profile.challenge, challengeFor('/mcp', 'mcp:use mcp:overview'));
  assert.equal(profile.refusal.reason, 'insufficient_scope');
  assert.match(profile.refusal.message, /mcp:overview/);

  // The person's permissions narrow at once: the next tools/list shows only what they may still do.
  assert.equal((await admin('PATCH', `/accounts/${who.accountId}/users/${who.userId}`, { permissions: ['contacts.view'] })).status, 200);
  const allowed = tools.filter((t) => t.scope === 'mcp:contacts' && (t.permission === null || t.permission === 'contacts.view'));
  assert.ok(allowed.length > 0 && allowed.length < contacts.length);
  assert.deepEqual((await toolNames(null, tokens.access_token)).sort(), allowed.map((t) => t.name).sort());
  // What the person may not do is refused for that reason, with no step-up: no scope would help.
  const create = await callRaw('/mcp', tokens.access_token, 'create_contact_group', { name: 'not theirs to make' });
  assert.equal(create.status, 200, create.raw);
  assert.equal(create.challenge, null);
  assert.equal(create.refusal.reason, 'permission_denied');
  // And what they may do runs.
  const listed = await callRaw('/mcp', tokens.access_token, 'list_contact_groups', {});
  assert.equal(listed.status, 200, listed.raw);
  assert.equal(listed.isError, false, listed.raw);
});

test('an elevation scope: its tools are listed, their calls answer the step-up challenge naming it; allowed, they run', async () => {
  const who = await personWithPassword();
  // The page's own ticks: the contract's six capabilities, never an elevation.
  const plain = await connect(who, CONTACTS);
  assert.deepEqual(plain.tokens.scope.split(' ').sort(), ['mcp:use', ...PRE_TICKED_SCOPES].sort());
  const names = await toolNames('contacts', plain.tokens.access_token);
  assert.ok(names.includes('create_contact_group') && names.includes('delete_contact_group'), JSON.stringify(names));

  const refused = await callRaw('/mcp/v1/contacts', plain.tokens.access_token, 'create_contact_group', { name: 'Stepped up' });
  assert.equal(refused.status, 403, refused.raw);
  assert.equal(refused.challenge, challengeFor('/mcp/v1/contacts', 'mcp:use mcp:contacts mcp:write'));
  assert.equal(refused.isError, true, 'the body is the tool error');
  assert.equal(refused.refusal.reason, 'insufficient_scope');
  assert.match(refused.refusal.message, /needs the mcp:write scope/);
  assert.doesNotMatch(await groupsOf(who), /Stepped up/, 'nothing written');

  // The SDK's own client reads the challenge in both protocol eras (one with an OAuth provider re-authorizes from it).
  for (const mode of ['legacy', 'auto'] as const) {
    const client = new Client({ name: 'scopes-test', version: '1.0.0' }, { versionNegotiation: { mode } });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(CONTACTS), {
        requestInit: { headers: { Authorization: `Bearer ${plain.tokens.access_token}` } },
      }),
    );
    try {
      assert.equal(client.getProtocolEra(), mode === 'auto' ? 'modern' : 'legacy');
      await assert.rejects(
        client.callTool({ name: 'delete_contact_group', arguments: { group: 'none' } }),
        /Insufficient scope: required "mcp:use mcp:contacts mcp:delete"/,
        mode,
      );
    } finally {
      await client.close();
    }
  }

  // An elevation alone opens nothing: the capability must be granted too.
  const onlyWrite = await connect(who, CONTACTS, { scopes: ['mcp:write'] });
  assert.deepEqual(await toolNames('contacts', onlyWrite.tokens.access_token), []);
  const noCapability = await callRaw('/mcp/v1/contacts', onlyWrite.tokens.access_token, 'create_contact_group', { name: 'Stepped up' });
  assert.equal(noCapability.status, 403);
  assert.equal(noCapability.challenge, challengeFor('/mcp/v1/contacts', 'mcp:use mcp:contacts mcp:write'));
  assert.match(noCapability.refusal.message, /needs the mcp:contacts scope/);

  // Authorized again with the elevation ticked: the same call runs.
  const stepped = await connect(who, CONTACTS, { scopes: ['mcp:contacts', 'mcp:write'] });
  const made = await callRaw('/mcp/v1/contacts', stepped.tokens.access_token, 'create_contact_group', { name: 'Stepped up' });
  assert.equal(made.status, 200, made.raw);
  assert.equal(made.isError, false, made.raw);
  assert.match(await groupsOf(who), /Stepped up/);
  // mcp:write is not mcp:delete: each elevation is its own.
  const gone = await callRaw('/mcp/v1/contacts', stepped.tokens.access_token, 'delete_contact_group', { group: 'none' });
  assert.equal(gone.status, 403);
  assert.equal(gone.challenge, challengeFor('/mcp/v1/contacts', 'mcp:use mcp:contacts mcp:delete'));
});

test('an svc_mcp_ credential keeps every scope: its person’s permissions alone bound it, and it is never stepped up', async () => {
  const t = await newTenant();
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(cred.status, 201, cred.text);
  const svc = cred.body.data.token as string;
  const tools = await manifestTools();
  const served = tools.filter((x) => x.servers.includes('contacts')).map((x) => x.name);
  assert.deepEqual((await toolNames('contacts', svc)).sort(), served.sort());
  const made = await callRaw('/mcp/v1/contacts', svc, 'create_contact_group', { name: 'By credential' });
  assert.equal(made.status, 200, made.raw);
  assert.equal(made.isError, false, made.raw);
});

test('the manifest describes OAuth beside svc_mcp_, its paths those of the authorization server’s metadata', async () => {
  const auth = (await manifest()).authentication;
  assert.deepEqual(
    auth.credentials.map((c: { kind: string }) => c.kind),
    ['oauth', 'svc_mcp'],
  );
  const oauth = auth.credentials[0];
  const metadata = (await http('GET', oauth.authorization_server_metadata)).body;
  for (const field of ['authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'])
    assert.equal(`${API_URL}${oauth[field]}`, metadata[field], field);
  assert.deepEqual(auth.scopes, {
    base: 'mcp:use',
    capability: [...CAPABILITY_SCOPES],
    elevation: [...ELEVATION_SCOPES],
    pre_ticked: [...PRE_TICKED_SCOPES],
  });
});

test('the operator lists an account’s MCP connections (OAuth and svc_mcp_), ends one for the next request; another account’s is 404', async () => {
  const who = await personWithPassword();
  const other = await personWithPassword();
  const app = await connect(who, CONTACTS, { client: { client_name: 'Scopes Assistant' }, scopes: ['mcp:contacts', 'mcp:send'] });
  assert.equal((await mcpInitialize('/mcp/v1/contacts', app.tokens.access_token)).status, 200);
  const cred = (await admin('POST', `/accounts/${who.accountId}/mcp-credentials`, { name: 'backend', user_id: who.userId })).body.data;
  const theirs = await connect(other, CONTACTS);

  const listed = await admin('GET', `/accounts/${who.accountId}/mcp-connections`);
  assert.equal(listed.status, 200, listed.text);
  const list = listed.body.data as any[];
  assert.deepEqual(
    list.map((c) => c.kind),
    ['svc_mcp', 'oauth'],
    'newest first',
  );
  const [credential, oauth] = list;
  assert.match(oauth.id, /^oauth_[A-Za-z0-9_-]+$/);
  assert.equal(oauth.name, 'Scopes Assistant');
  assert.equal(oauth.client_id, app.client);
  assert.deepEqual(oauth.person, { id: who.userId, name: 'Tester', email: who.email, active: true });
  assert.deepEqual([...oauth.scopes].sort(), ['mcp:contacts', 'mcp:send', 'mcp:use']);
  assert.deepEqual(oauth.resources, [CONTACTS]);
  assert.ok(Date.parse(oauth.created_at) <= Date.now());
  assert.ok(oauth.last_used_at !== null, 'its token opened the endpoint');
  // Its refresh token (30 days) is the last to expire.
  assert.ok(Date.parse(oauth.expires_at) > Date.now() + 29 * 24 * 3600 * 1000, oauth.expires_at);
  assert.deepEqual(credential, {
    id: `credential_${cred.id}`,
    kind: 'svc_mcp',
    name: 'backend',
    client_id: null,
    person: oauth.person,
    scopes: [...MCP_SCOPES],
    resources: null,
    created_at: cred.created_at,
    last_used_at: null,
    expires_at: null,
  });
  // The admin CLI lists the same.
  const viaCli = await cli('mcp-connections:list', '--account', String(who.accountId));
  assert.equal(viaCli.code, 0, viaCli.stderr);
  assert.deepEqual(
    viaCli.json.data.map((c: { id: string }) => c.id),
    list.map((c) => c.id),
  );

  // Tenant isolation: the other account neither lists nor ends them.
  const otherList = (await admin('GET', `/accounts/${other.accountId}/mcp-connections`)).body.data as any[];
  assert.equal(otherList.length, 1);
  assert.ok(!otherList.some((c) => c.id === oauth.id || c.id === credential.id));
  for (const id of [oauth.id, credential.id, 'oauth_nosuchgrant', 'credential_999999999', 'x', `${oauth.id}!`]) {
    const r = await admin('DELETE', `/accounts/${other.accountId}/mcp-connections/${encodeURIComponent(id)}`);
    assert.equal(r.status, 404, `${id}: ${r.text}`);
  }
  assert.equal((await mcpInitialize('/mcp/v1/contacts', app.tokens.access_token)).status, 200, 'untouched');

  // Ended by the CLI: the next request is refused with the challenge, the refresh token is dead too.
  const ended = await cli('mcp-connections:revoke', '--account', String(who.accountId), '--connection', oauth.id);
  assert.equal(ended.code, 0, ended.stderr);
  assert.equal(ended.json.data.id, oauth.id);
  const refused = await mcpInitialize('/mcp/v1/contacts', app.tokens.access_token);
  assert.equal(refused.status, 401);
  assert.match(refused.headers.get('www-authenticate') ?? '', /resource_metadata="[^"]+\/mcp\/v1\/contacts"/);
  const refresh = await token({ grant_type: 'refresh_token', refresh_token: app.tokens.refresh_token, client_id: app.client });
  assert.equal(refresh.body.error, 'invalid_grant');
  assert.equal((await admin('DELETE', `/accounts/${who.accountId}/mcp-connections/${oauth.id}`)).status, 404, 'already ended');

  // The credential ended by the API: its next request is refused too.
  assert.equal((await mcpInitialize('/mcp/v1/contacts', cred.token)).status, 200);
  const revoked = await admin('DELETE', `/accounts/${who.accountId}/mcp-connections/${credential.id}`);
  assert.equal(revoked.status, 200, revoked.text);
  assert.equal(revoked.body.data.kind, 'svc_mcp');
  assert.equal((await mcpInitialize('/mcp/v1/contacts', cred.token)).status, 401);
  assert.deepEqual((await admin('GET', `/accounts/${who.accountId}/mcp-connections`)).body.data, []);
  // The other account's connection was never touched.
  assert.equal((await mcpInitialize('/mcp/v1/contacts', theirs.tokens.access_token)).status, 200);
  assert.equal((await admin('GET', `/accounts/999999999/mcp-connections`)).status, 404);
});
