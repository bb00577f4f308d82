import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_URL, admin, http, newTenant } from '../support/stack.js';
import { REDIRECT, authorizeUrl, Browser, clientId, mcpInitialize, pkce, register, resourceOf, token } from '../support/oauth.js';
import { MCP_SERVERS } from '../../api/operation.js';
import { MCP_SCOPES } from '../../domain/oauth/index.js';

// The MCP authorization server on the API (issue 27, point 1): its metadata (RFC 8414), each MCP
// endpoint's protected-resource metadata (RFC 9728) and the 401 that points to it, dynamic client
// registration (RFC 7591) within its limits, and an authorization request that is refused before
// anyone signs in: without PKCE S256, to an unregistered redirect, for a resource that is not an
// MCP endpoint. Each refusal is an OAuth error, never a 500, never a redirect to where it must not go.

test('authorization-server metadata (RFC 8414): our endpoints, code + PKCE S256 only, public clients, CIMD', async () => {
  const r = await http('GET', '/.well-known/oauth-authorization-server');
  assert.equal(r.status, 200, r.text);
  const m = r.body;
  assert.equal(m.issuer, API_URL);
  assert.equal(m.authorization_endpoint, `${API_URL}/oauth/authorize`);
  assert.equal(m.token_endpoint, `${API_URL}/oauth/token`);
  assert.equal(m.registration_endpoint, `${API_URL}/oauth/register`);
  assert.equal(m.revocation_endpoint, `${API_URL}/oauth/revoke`);
  assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(m.response_types_supported, ['code']);
  assert.deepEqual(m.token_endpoint_auth_methods_supported, ['none']);
  assert.deepEqual([...m.grant_types_supported].sort(), ['authorization_code', 'refresh_token']);
  assert.equal(m.authorization_response_iss_parameter_supported, true);
  assert.equal(m.client_id_metadata_document_supported, true);
  // Features left off are not advertised.
  for (const absent of [
    'userinfo_endpoint',
    'end_session_endpoint',
    'pushed_authorization_request_endpoint',
    'introspection_endpoint',
    'dpop_signing_alg_values_supported',
  ])
    assert.equal(m[absent], undefined, absent);
  // The OpenID name of the same document, for clients that try it first.
  const oidc = await http('GET', '/.well-known/openid-configuration');
  assert.equal(oidc.status, 200);
  assert.equal(oidc.body.token_endpoint, m.token_endpoint);
  const jwks = await http('GET', '/oauth/jwks');
  assert.equal(jwks.status, 200);
  assert.equal(jwks.body.keys[0].kty, 'EC');
  assert.equal(jwks.body.keys[0].d, undefined, 'the JWKS never shows the private part');
});

test('protected-resource metadata (RFC 9728) for /mcp and each /mcp/v1/{server}: resource is the endpoint, exactly', async () => {
  for (const server of [null, ...MCP_SERVERS]) {
    const path = server === null ? '/mcp' : `/mcp/v1/${server}`;
    const r = await http('GET', `/.well-known/oauth-protected-resource${path}`);
    assert.equal(r.status, 200, path);
    assert.equal(r.body.resource, `${API_URL}${path}`);
    assert.deepEqual(r.body.authorization_servers, [API_URL]);
    assert.deepEqual(r.body.bearer_methods_supported, ['header']);
    assert.deepEqual(r.body.scopes_supported, MCP_SCOPES);
    assert.equal(r.headers.get('access-control-allow-origin'), '*');
  }
  assert.equal((await http('GET', '/.well-known/oauth-protected-resource/mcp/v1/nosuch')).status, 404);
});

test('every 401 of an MCP path names its protected-resource metadata; svc_mcp_ credentials still open it', async () => {
  const t = await newTenant();
  const cases: [string, string | null][] = [
    ['/mcp', null],
    ['/mcp/v1/contacts', null],
    ['/mcp/v1/payments', 'svc_mcp_' + 'x'.repeat(64)],
    ['/mcp', t.token], // a REST key is refused on MCP
    ['/mcp/v1/messaging', 'A'.repeat(43)], // shaped like an access token, but none
  ];
  for (const [path, bearer] of cases) {
    const r = await mcpInitialize(path, bearer);
    assert.equal(r.status, 401, `${path}: ${r.text}`);
    const challenge = r.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /^Bearer realm="mcp"/);
    assert.ok(challenge.includes(`resource_metadata="${API_URL}/.well-known/oauth-protected-resource${path}"`), challenge);
    if (bearer) assert.match(challenge, /error="invalid_token"/);
    else assert.doesNotMatch(challenge, /error=/);
  }
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal((await mcpInitialize('/mcp/v1/contacts', cred.body.data.token)).status, 200);
});

test('dynamic client registration: a public client with PKCE; a secret is never issued, even when asked for', async () => {
  const r = await register({
    token_endpoint_auth_method: 'client_secret_post',
    grant_types: ['authorization_code', 'refresh_token'],
    application_type: 'native',
  });
  assert.equal(r.status, 201, r.text);
  assert.equal(typeof r.body.client_id, 'string');
  assert.equal(r.body.token_endpoint_auth_method, 'none');
  assert.equal(r.body.client_secret, undefined);
  assert.equal(r.body.registration_access_token, undefined);
  assert.deepEqual(r.body.redirect_uris, [REDIRECT]);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  // Without grant_types, refresh tokens are included.
  const plain = await register({});
  assert.deepEqual(plain.body.grant_types, ['authorization_code', 'refresh_token']);
});

test('registration refuses oversized, malformed and dangerous metadata with an OAuth error, never a 500', async () => {
  const bad: [string, unknown, number, string][] = [
    ['not JSON', '{"redirect_uris": [', 400, 'invalid_client_metadata'],
    ['an array', '[]', 400, 'invalid_client_metadata'],
    ['oversized', JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'x'.repeat(9000) }), 413, 'invalid_client_metadata'],
    ['deep', JSON.stringify({ redirect_uris: [REDIRECT], extra: [[[[[['deep']]]]]] }), 400, 'invalid_client_metadata'],
    ['no redirect', JSON.stringify({ client_name: 'x' }), 400, 'invalid_redirect_uri'],
    [
      'eleven redirects',
      JSON.stringify({ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }),
      400,
      'invalid_redirect_uri',
    ],
    [
      'a thousand redirects',
      JSON.stringify({ redirect_uris: Array.from({ length: 1000 }, (_, i) => `https://a.example/${i}`) }),
      413,
      'invalid_client_metadata',
    ],
    ['http off loopback', JSON.stringify({ redirect_uris: ['http://evil.example/cb'] }), 400, 'invalid_redirect_uri'],
    [
      'http off loopback, among good ones',
      JSON.stringify({ redirect_uris: [REDIRECT, 'http://192.0.2.1/cb'] }),
      400,
      'invalid_redirect_uri',
    ],
    ['data', JSON.stringify({ redirect_uris: ['data:text/html,<script>alert(1)</script>'] }), 400, 'invalid_redirect_uri'],
    ['a scope not offered', JSON.stringify({ redirect_uris: [REDIRECT], scope: 'mcp:contacts admin' }), 400, 'invalid_client_metadata'],
    ['fragment', JSON.stringify({ redirect_uris: ['https://a.example/cb#x'] }), 400, 'invalid_redirect_uri'],
    ['javascript', JSON.stringify({ redirect_uris: ['javascript:alert(1)'] }), 400, 'invalid_redirect_uri'],
    [
      'jwks_uri (a fetch of ours)',
      JSON.stringify({ redirect_uris: [REDIRECT], jwks_uri: 'https://169.254.169.254/' }),
      400,
      'invalid_client_metadata',
    ],
    [
      'sector_identifier_uri',
      JSON.stringify({ redirect_uris: [REDIRECT], sector_identifier_uri: 'https://a.example/s' }),
      400,
      'invalid_client_metadata',
    ],
    ['long name', JSON.stringify({ redirect_uris: [REDIRECT], client_name: 'n'.repeat(201) }), 400, 'invalid_client_metadata'],
    ['implicit', JSON.stringify({ redirect_uris: [REDIRECT], grant_types: ['implicit'] }), 400, 'invalid_client_metadata'],
    ['logo over http', JSON.stringify({ redirect_uris: [REDIRECT], logo_uri: 'http://a.example/l.png' }), 400, 'invalid_client_metadata'],
  ];
  for (const [what, raw, status, error] of bad) {
    const r = await http('POST', '/oauth/register', { raw: raw as string, headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, status, `${what}: ${r.text}`);
    assert.equal(r.body.error, error, what);
    assert.equal(typeof r.body.error_description, 'string', what);
  }
  const form = await http('POST', '/oauth/register', {
    raw: 'redirect_uris=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assert.equal(form.status, 400);
  assert.equal(form.body.error, 'invalid_client_metadata');
});

test('an authorization request without PKCE S256, or for a resource that is not an MCP endpoint, goes back with an error and no code', async () => {
  const id = await clientId();
  const { challenge } = pkce();
  const browser = new Browser();
  const cases: [string, Record<string, string | undefined>, string][] = [
    ['no challenge', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['plain', { code_challenge: challenge, code_challenge_method: 'plain' }, 'invalid_request'],
    ['not an MCP endpoint', { code_challenge: challenge, resource: `${API_URL}/api/v3` }, 'invalid_target'],
    ['another server', { code_challenge: challenge, resource: 'https://elsewhere.example/mcp' }, 'invalid_target'],
    ['an unknown MCP server', { code_challenge: challenge, resource: `${API_URL}/mcp/v1/nosuch` }, 'invalid_target'],
    ['a token response type', { code_challenge: challenge, response_type: 'token' }, 'unsupported_response_type'],
  ];
  for (const [what, extra, error] of cases) {
    const r = await browser.go(authorizeUrl({ client_id: id, resource: resourceOf('contacts'), ...extra }));
    assert.equal(r.status, 303, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
    const back = new URL(r.location!);
    assert.equal(`${back.origin}${back.pathname}`, REDIRECT, what);
    // A token response type answers in the fragment, as that type would have.
    const params = back.hash ? new URLSearchParams(back.hash.slice(1)) : back.searchParams;
    assert.equal(params.get('error'), error, what);
    assert.equal(params.get('code'), null, what);
    assert.equal(params.get('state'), 'st-1', what);
    assert.equal(params.get('iss'), API_URL, `${what}: RFC 9207 iss`);
  }
});

test('an unregistered redirect URI, an unknown client or an open-redirect attempt is never redirected to: an error page', async () => {
  const id = await clientId();
  const { challenge } = pkce();
  const browser = new Browser();
  const attempts = [
    authorizeUrl({ client_id: id, code_challenge: challenge, redirect_uri: 'https://evil.example/callback' }),
    authorizeUrl({ client_id: id, code_challenge: challenge, redirect_uri: `${REDIRECT}/../../evil` }),
    authorizeUrl({ client_id: id, code_challenge: challenge, redirect_uri: `${REDIRECT}?next=https://evil.example` }),
    authorizeUrl({ client_id: id, code_challenge: challenge, redirect_uri: REDIRECT.replace('127.0.0.1', 'localhost') }),
    authorizeUrl({ client_id: id, code_challenge: challenge, redirect_uri: undefined }),
    authorizeUrl({ client_id: 'no-such-client', code_challenge: challenge }),
    authorizeUrl({ client_id: 'https://evil.example/client.json', code_challenge: challenge }),
  ];
  for (const url of attempts) {
    const r = await browser.go(url, { headers: { accept: 'text/html' } });
    assert.equal(r.location, null, `${url} redirected to ${r.location}`);
    assert.ok(r.status === 400 || r.status === 401, `${url}: ${r.status}`);
    assert.match(r.headers.get('content-type') ?? '', /text\/html/);
    assert.match(r.text, /This connection cannot go on/);
    assert.match(r.headers.get('content-security-policy') ?? '', /default-src 'none'/);
  }
});

test('the token endpoint answers OAuth errors: unknown code, wrong grant type, unknown client, no client', async () => {
  const id = await clientId();
  const { verifier } = pkce();
  const cases: [Record<string, string>, number, string][] = [
    [
      { grant_type: 'authorization_code', code: 'nope', code_verifier: verifier, redirect_uri: REDIRECT, client_id: id },
      400,
      'invalid_grant',
    ],
    [{ grant_type: 'refresh_token', refresh_token: 'nope', client_id: id }, 400, 'invalid_grant'],
    [{ grant_type: 'client_credentials', client_id: id }, 400, 'unsupported_grant_type'],
    [{ grant_type: 'password', username: 'a', password: 'b', client_id: id }, 400, 'unsupported_grant_type'],
    [{ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT, client_id: 'nobody' }, 401, 'invalid_client'],
    [{ grant_type: 'authorization_code', code: 'nope', redirect_uri: REDIRECT }, 400, 'invalid_request'],
  ];
  for (const [form, status, error] of cases) {
    const r = await token(form);
    assert.equal(r.status, status, `${JSON.stringify(form)}: ${r.text}`);
    assert.equal(r.body.error, error, JSON.stringify(form));
    assert.equal(r.body.access_token, undefined);
  }
  assert.equal((await http('GET', '/oauth/token')).status, 405);
});
