import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, http } from '../support/stack.js';
import { personWithPassword } from '../support/people.js';
import { REDIRECT, codeFor, connect, exchange, mcpInitialize, refresh, resourceOf, revoke, token } from '../support/oauth.js';

// Bad input and attacks on the MCP authorization server that the flow, server and limits files do
// not already make (issue 27, point 7): refresh tokens presented by the wrong client, for more
// than was granted or for another endpoint; malformed token and revocation requests; a token
// carried anywhere but the Authorization header of its own endpoint. Each is an OAuth error or a
// 401, never a 500 and never a token, and leaves the real connection working.

const CONTACTS = resourceOf('contacts');

/** A 4xx OAuth error with no token in it. */
function refused(r: { status: number; text: string; body: any }, error: string, what: string) {
  assert.ok(r.status >= 400 && r.status < 500, `${what}: ${r.status} ${r.text}`);
  assert.equal(r.body?.error, error, `${what}: ${r.text}`);
  assert.equal(r.body?.access_token, undefined, what);
  assert.equal(r.body?.refresh_token, undefined, what);
}

test('a refresh token from another client, for a wider scope or another endpoint, or an access token in its place: refused, the connection unharmed', async () => {
  const who = await personWithPassword();
  const { client, tokens } = await connect(who, CONTACTS, { scopes: ['mcp:contacts'] });
  const other = await connect(who, CONTACTS);
  const attempts: [string, Record<string, string>, string][] = [
    ['another client', { client_id: other.client }, 'invalid_grant'],
    ['a scope never granted', { scope: 'mcp:contacts mcp:send' }, 'invalid_scope'],
    ['another endpoint', { resource: resourceOf('payments') }, 'invalid_target'],
    ['an endpoint elsewhere', { resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
  ];
  for (const [what, over, error] of attempts) refused(await refresh(client, tokens.refresh_token, over), error, what);
  const twice = new URLSearchParams({
    grant_type: 'refresh_token',
    refresh_token: tokens.refresh_token,
    client_id: client,
    resource: CONTACTS,
  });
  twice.append('resource', resourceOf(null));
  refused(
    await http('POST', '/oauth/token', { raw: twice.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
    'invalid_target',
    'two resources',
  );
  refused(await refresh(client, tokens.access_token), 'invalid_grant', 'an access token as a refresh token');
  // None of them spent the refresh token or ended the connection.
  assert.equal((await mcpInitialize('/mcp/v1/contacts', tokens.access_token)).status, 200);
  const renewed = await refresh(client, tokens.refresh_token);
  assert.equal(renewed.status, 200, renewed.text);
  assert.deepEqual(renewed.body.scope.split(' ').sort(), ['mcp:contacts', 'mcp:use']);
});

test('malformed token requests: repeated, missing or oversized parameters, a JSON body, a verifier outside PKCE’s alphabet', async () => {
  const who = await personWithPassword();
  const c = await codeFor(who, CONTACTS);
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code: c.code,
    code_verifier: c.verifier,
    redirect_uri: REDIRECT,
    client_id: c.client,
    resource: CONTACTS,
  });
  const raw = (body: string, contentType = 'application/x-www-form-urlencoded') =>
    http('POST', '/oauth/token', { raw: body, headers: { 'content-type': contentType } });
  const cases: [string, () => Promise<{ status: number; text: string; body: any }>, string][] = [
    ['the code twice', () => raw(`${form}&code=${encodeURIComponent(c.code)}`), 'invalid_request'],
    ['no grant type', () => raw(new URLSearchParams({ code: c.code, client_id: c.client }).toString()), 'invalid_request'],
    ['a JSON body', () => raw(JSON.stringify(Object.fromEntries(form)), 'application/json'), 'invalid_request'],
    ['an empty body', () => raw(''), 'invalid_request'],
    ['a 100 KB code', () => exchange({ ...c, code: 'c'.repeat(100_000) }, CONTACTS), 'invalid_request'],
    [
      'a verifier with spaces',
      () => exchange({ ...c, verifier: `${c.verifier.slice(0, 40)} ${'a'.repeat(10)}` }, CONTACTS),
      'invalid_request',
    ],
    ['a 200-character verifier', () => exchange({ ...c, verifier: 'v'.repeat(200) }, CONTACTS), 'invalid_request'],
  ];
  for (const [what, send, error] of cases) refused(await send(), error, what);
  // The code survived every one of them.
  assert.equal((await exchange(c, CONTACTS)).status, 200);
});

test('revocation and the token’s carriage: bad revocation requests are OAuth errors; a token in the query string, under another scheme or on REST opens nothing', async () => {
  const who = await personWithPassword();
  const { client, tokens } = await connect(who, CONTACTS);
  refused(await revoke({ client_id: client }), 'invalid_request', 'revocation without a token');
  refused(await revoke({ token: tokens.access_token, client_id: 'no-such-client' }), 'invalid_client', 'revocation by an unknown client');
  refused(await revoke({ token: tokens.access_token }), 'invalid_request', 'revocation without a client');

  const query = await http('POST', `/mcp/v1/contacts?access_token=${tokens.access_token}`, {
    raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
  assert.equal(query.status, 401, 'never read from the query string');
  const basic = await http('POST', '/mcp/v1/contacts', {
    raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Basic ${Buffer.from(`${client}:${tokens.access_token}`).toString('base64')}`,
    },
  });
  assert.equal(basic.status, 401);
  // An MCP access token is not a REST key: the same 401 as any unknown key.
  const rest = await api('GET', '/api/v3/contact-groups', tokens.access_token);
  assert.equal(rest.status, 401, rest.text);
  // And the real one still works, from the header, where it belongs.
  assert.equal((await mcpInitialize('/mcp/v1/contacts', tokens.access_token)).status, 200);
  // A token request that names a grant the token endpoint does not know is no token either.
  refused(
    await token({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: tokens.access_token, client_id: client }),
    'unsupported_grant_type',
    'token exchange',
  );
});
