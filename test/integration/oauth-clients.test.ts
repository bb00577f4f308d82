import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Client, StreamableHTTPClientTransport, UnauthorizedError, type FetchLike } from '@modelcontextprotocol/client';
import { API_URL, api } from '../support/stack.js';
import { personWithPassword } from '../support/people.js';
import { inspector } from '../support/inspector.js';
import { REDIRECT, Browser, MemoryOAuthProvider, authorizeThroughPages, connect, refresh, resourceOf } from '../support/oauth.js';
import { PRE_TICKED_SCOPES } from '../../domain/oauth/index.js';

// Real clients against the MCP authorization server (issue 27, point 6): the official TypeScript
// SDK client runs its own OAuth (discovery from the 401, protected-resource and authorization-server
// metadata, dynamic registration, PKCE, the RFC 8707 resource, the RFC 9207 iss check, refresh on a
// 401) while a person signs in and consents on our real pages; the MCP Inspector CLI calls /mcp
// with an OAuth access token in both protocol eras. The conformance suite runs from
// scripts/conformance.ts (docs/mcp.md).

const CONTACTS = resourceOf('contacts');
/** The page's own ticks and mcp:write: the tests write (an elevation is never pre-ticked; oauth-scopes.test.ts). */
const WRITER = [...PRE_TICKED_SCOPES, 'mcp:write'];

/** A fetch that notes each request (method, path, status) for the order of discovery. */
function noting(seen: string[]): FetchLike {
  return async (url, init) => {
    const res = await fetch(url, init);
    seen.push(`${init?.method ?? 'GET'} ${new URL(String(url)).pathname} ${res.status}`);
    return res;
  };
}

type Era = 'legacy' | 'auto';

/** Runs fn with the SDK client connected to `endpoint` through `provider` (its OAuth), in one era. */
async function withOAuthClient<T>(provider: MemoryOAuthProvider, era: Era, fn: (c: Client) => Promise<T>, seen: string[] = []): Promise<T> {
  const client = new Client({ name: 'sdk-oauth', version: '1.0.0' }, { versionNegotiation: { mode: era } });
  await client.connect(new StreamableHTTPClientTransport(new URL(CONTACTS), { authProvider: provider, fetch: noting(seen) }));
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

const groupNames = async (token: string) =>
  ((await api('GET', '/api/v3/contact-groups?limit=100', token)).body.data.groups as { name: string }[]).map((g) => g.name);

test('the MCP SDK client’s own OAuth: 401 → metadata → registration → our consent page → token → tools in both eras → refresh on a 401', async () => {
  const who = await personWithPassword();
  const provider = new MemoryOAuthProvider('SDK Assistant');
  const seen: string[] = [];

  // Discovery and registration, all from the first 401; the SDK then sends the person to authorize.
  const transport = new StreamableHTTPClientTransport(new URL(CONTACTS), { authProvider: provider, fetch: noting(seen) });
  await assert.rejects(new Client({ name: 'sdk-oauth', version: '1.0.0' }).connect(transport), UnauthorizedError);
  const order = [
    'POST /mcp/v1/contacts 401',
    'GET /.well-known/oauth-protected-resource/mcp/v1/contacts 200',
    'GET /.well-known/oauth-authorization-server 200',
    'POST /oauth/register 201',
  ];
  const at = order.map((s) => seen.indexOf(s));
  assert.ok(
    at.every((i, n) => i >= 0 && (n === 0 || i > at[n - 1])),
    `discovery out of order: ${seen.join(' | ')}`,
  );
  assert.ok(provider.client?.client_id, 'registered by DCR');
  assert.equal(provider.client.issuer, API_URL);
  const url = provider.authorizationUrl;
  assert.ok(url, 'the SDK sent the person to authorize');
  assert.equal(`${url.origin}${url.pathname}`, `${API_URL}/oauth/authorize`);
  assert.equal(url.searchParams.get('client_id'), provider.client.client_id);
  assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(url.searchParams.get('resource'), CONTACTS, 'RFC 8707: the endpoint from its protected-resource metadata');
  assert.equal(url.searchParams.get('redirect_uri'), REDIRECT);

  // The person signs in and allows on our pages; the SDK checks iss (RFC 9207) and exchanges the code.
  const back = await authorizeThroughPages(new Browser(), url.href, who, { scopes: WRITER });
  await transport.finishAuth(back);
  const issued = provider.saved;
  assert.ok(issued?.access_token && issued.refresh_token, JSON.stringify(issued));
  assert.equal(issued.token_type, 'Bearer');

  // The token opens the endpoint in both protocol eras, as the person, in their account.
  for (const era of ['legacy', 'auto'] as const) {
    const made = await withOAuthClient(provider, era, async (c) => {
      assert.equal(c.getProtocolEra(), era === 'auto' ? 'modern' : 'legacy');
      return c.callTool({ name: 'create_contact_group', arguments: { name: `SDK ${era}` } });
    });
    assert.notEqual(made.isError, true, JSON.stringify(made));
  }
  assert.deepEqual((await groupNames(who.token)).filter((n) => n.startsWith('SDK ')).sort(), ['SDK auto', 'SDK legacy']);

  // An access token the server no longer knows (as after expiry): the SDK gets a 401, refreshes
  // with its refresh token (which rotates) and retries, without the person.
  provider.saved = { ...issued, access_token: crypto.randomBytes(32).toString('base64url') };
  seen.length = 0;
  const listed = await withOAuthClient(provider, 'auto', async (c) => (await c.listTools()).tools.map((t) => t.name), seen);
  assert.ok(listed.includes('list_contact_groups'));
  assert.ok(seen.includes('POST /oauth/token 200'), `no refresh: ${seen.join(' | ')}`);
  const renewed = provider.saved!;
  assert.notEqual(renewed.refresh_token, issued.refresh_token, 'the refresh token rotated');
  assert.notEqual(renewed.access_token, issued.access_token);

  // The old refresh token replayed (by a thief): refused, and the connection ends; the SDK's next
  // call cannot refresh either and sends the person back to authorize.
  assert.equal((await refresh(provider.client.client_id, issued.refresh_token!)).body.error, 'invalid_grant');
  provider.authorizationUrl = null;
  await assert.rejects(
    withOAuthClient(provider, 'legacy', (c) => c.listTools()),
    (err: Error) => err instanceof UnauthorizedError || /401|unauthori[sz]ed/i.test(err.message),
  );
  assert.ok(provider.authorizationUrl, 'the SDK went back to the authorization endpoint');
});

test('the MCP Inspector CLI with an OAuth access token: tools/list and tools/call on /mcp in both eras; another endpoint’s token is refused', async () => {
  const who = await personWithPassword();
  const { tokens } = await connect(who, resourceOf(null), { scopes: WRITER });
  const common = ['--transport', 'http', '--header', `Authorization: Bearer ${tokens.access_token}`];
  for (const era of ['legacy', 'modern']) {
    const listed = await inspector([`${API_URL}/mcp`, ...common, '--method', 'tools/list', '--protocol-era', era]);
    assert.ok(
      listed.tools.some((t: { name: string }) => t.name === 'create_contact_group'),
      era,
    );
    const made = await inspector([
      `${API_URL}/mcp`,
      ...common,
      '--protocol-era',
      era,
      '--method',
      'tools/call',
      '--tool-name',
      'create_contact_group',
      '--tool-arg',
      `name=Inspector ${era}`,
    ]);
    assert.notEqual(made.isError, true, JSON.stringify(made));
    assert.equal(made.structuredContent.name, `Inspector ${era}`);
  }
  assert.deepEqual((await groupNames(who.token)).filter((n) => n.startsWith('Inspector ')).sort(), [
    'Inspector legacy',
    'Inspector modern',
  ]);
  // The same token on /mcp/v1/payments (issued for /mcp only): the CLI's "authentication required".
  await assert.rejects(inspector([`${API_URL}/mcp/v1/payments`, ...common, '--method', 'tools/list']), (err: { code?: number }) => {
    assert.equal(err.code, 3);
    return true;
  });
});
