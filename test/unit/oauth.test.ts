import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import Koa from 'koa';
import {
  BASE_SCOPE,
  CAPABILITY_SCOPES,
  ELEVATION_SCOPES,
  MCP_SCOPES,
  PRE_TICKED_SCOPES,
  checkRegistration,
  grantFromTicks,
  parseSubject,
  passwordProblem,
  redirectUriProblem,
  requestedScopeForConsent,
  resourceMetadataUrl,
  resourceUrl,
  serverOfResource,
  subjectOf,
} from '../../domain/oauth/index.js';
import { hashPassword, verifyPassword } from '../../services/oauth/passwords.js';
import { cookieKeys, signingJwk, signingKeys } from '../../services/oauth/keys.js';
import { PairThrottle } from '../../api/oauth/throttles.js';
import { CSRF_COOKIE, csrfToken, csrfValid } from '../../api/oauth/csrf.js';
import { consentPage, escapeHtml, formTargetOf, pageHeaders } from '../../api/oauth/pages.js';
import { MCP_SERVERS } from '../../api/operation.js';

// The pure parts of the MCP authorization server: the contract's scopes and what the consent page
// does with them, resource indicators and subjects, the registration limits, password rules and
// hashing, the keys derived from OAUTH_SECRET, the throttles, the CSRF tokens and the pages' escaping.

test('the contract’s scopes: 25 capabilities, 8 elevations, mcp:use; the six pre-ticked are capabilities, no elevation is', () => {
  assert.equal(CAPABILITY_SCOPES.length, 25);
  assert.equal(ELEVATION_SCOPES.length, 8);
  assert.deepEqual(MCP_SCOPES, [BASE_SCOPE, ...CAPABILITY_SCOPES, ...ELEVATION_SCOPES]);
  assert.deepEqual([...PRE_TICKED_SCOPES], ['mcp:overview', 'mcp:calls', 'mcp:contacts', 'mcp:support', 'mcp:accounts', 'mcp:navigate']);
  for (const s of PRE_TICKED_SCOPES) assert.ok((CAPABILITY_SCOPES as readonly string[]).includes(s));
});

test('an authorization request carries every MCP scope to the consent page, the client’s other words kept', () => {
  const scope = requestedScopeForConsent('offline_access mcp:messaging mcp:messaging');
  const words = scope.split(' ');
  assert.equal(words[0], 'offline_access');
  assert.equal(new Set(words).size, words.length, 'each word once');
  for (const s of MCP_SCOPES) assert.ok(words.includes(s), s);
  assert.deepEqual(requestedScopeForConsent(undefined).split(' '), [...MCP_SCOPES]);
});

test('the ticks are the grant: mcp:use always, unknown words ignored, the rest of the MCP scopes rejected', () => {
  const { granted, rejected } = grantFromTicks(['mcp:send', 'mcp:contacts', 'mcp:use', 'openid', 'mcp:nonsense', 'mcp:contacts']);
  assert.deepEqual(granted, ['mcp:use', 'mcp:contacts', 'mcp:send']);
  assert.equal(rejected.length, MCP_SCOPES.length - 3);
  assert.ok(!rejected.includes('mcp:use'));
  assert.deepEqual(grantFromTicks([]).granted, ['mcp:use']);
});

test('resource indicators name the MCP endpoints exactly; metadata is path-inserted; subjects carry account and user', () => {
  const base = 'https://api.example.com/';
  assert.equal(resourceUrl(base, null), 'https://api.example.com/mcp');
  assert.equal(resourceUrl(base, 'contacts'), 'https://api.example.com/mcp/v1/contacts');
  assert.equal(resourceMetadataUrl(base, 'contacts'), 'https://api.example.com/.well-known/oauth-protected-resource/mcp/v1/contacts');
  assert.equal(serverOfResource(base, 'https://api.example.com/mcp', MCP_SERVERS), null);
  assert.equal(serverOfResource(base, 'https://api.example.com/mcp/v1/payments', MCP_SERVERS), 'payments');
  for (const other of [
    'https://api.example.com/mcp/',
    'https://api.example.com/mcp/v1/payments/',
    'https://api.example.com/mcp/v1/nosuch',
    'https://API.example.com/mcp',
    'https://evil.example/mcp',
    'http://api.example.com/mcp',
    'https://api.example.com/mcp#x',
  ])
    assert.equal(serverOfResource(base, other, MCP_SERVERS), undefined, other);
  assert.equal(subjectOf(12, 345), '12.345');
  assert.deepEqual(parseSubject('12.345'), { accountId: 12, userId: 345 });
  for (const bad of ['', '12', '12.', '.3', '0.1', '1.0', '01.2', '1.2.3', '99999999999.1', '2147483648.1', 'a.b', undefined, null])
    assert.equal(parseSubject(bad), null, String(bad));
});

test('registration: bounded, no fetch of ours, no secret: refusals name the field, the method is replaced by none', () => {
  const ok = checkRegistration({
    redirect_uris: ['http://127.0.0.1:3000/cb', 'https://app.example/cb'],
    token_endpoint_auth_method: 'client_secret_basic',
    client_secret: 's',
  });
  assert.ok('metadata' in ok);
  assert.equal(ok.metadata.token_endpoint_auth_method, 'none');
  assert.equal(ok.metadata.client_secret, undefined);
  assert.deepEqual(ok.metadata.grant_types, ['authorization_code', 'refresh_token']);
  // The SDK registers the protected-resource metadata's scopes: checked, then not registered (the consent page decides).
  const scoped = checkRegistration({ redirect_uris: ['http://127.0.0.1:3000/cb'], scope: `${MCP_SCOPES.join(' ')} offline_access openid` });
  assert.ok('metadata' in scoped);
  assert.equal('scope' in scoped.metadata, false);
  const refused = (body: unknown) => {
    const r = checkRegistration(body);
    assert.ok('refused' in r, JSON.stringify(body));
    return r.refused;
  };
  assert.equal(refused([]).error, 'invalid_client_metadata');
  assert.equal(refused({}).error, 'invalid_redirect_uri');
  assert.equal(refused({ redirect_uris: ['http://evil.example/cb'] }).error, 'invalid_redirect_uri');
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], jwks_uri: 'https://a.example/j' }).description, /jwks_uri/);
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], software_statement: 'x' }).description, /software_statement/);
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], client_name: 7 }).description, /client_name/);
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], contacts: Array(6).fill('a@b.c') }).description, /contacts/);
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], application_type: 'service' }).description, /application_type/);
  assert.match(refused({ redirect_uris: ['https://a.example/cb'], scope: 'mcp:contacts admin' }).description, /scope names admin/);
  assert.match(refused(Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`k${i}`, 1]))).description, /40 fields/);

  assert.equal(redirectUriProblem('https://app.example/cb?x=1'), null);
  assert.equal(redirectUriProblem('http://localhost:8080/cb'), null);
  assert.equal(redirectUriProblem('http://[::1]:8080/cb'), null);
  assert.equal(redirectUriProblem('com.example.app:/oauth'), null, 'a native app’s own scheme');
  for (const bad of [
    '',
    'relative/cb',
    'http://10.0.0.1/cb',
    'https://a.example/cb#f',
    'https://u:p@a.example/cb',
    'javascript:alert(1)',
    'data:text/html,x',
    `https://a.example/${'x'.repeat(2000)}`,
    42,
  ])
    assert.notEqual(redirectUriProblem(bad), null, String(bad));
});

test('passwords: at least 12 characters, at most 256, not the email, not one repeated character', () => {
  assert.equal(passwordProblem('correct horse battery', 'a@b.c'), null);
  assert.match(passwordProblem('short', 'a@b.c')!, /at least 12/);
  assert.match(passwordProblem('x'.repeat(257), 'a@b.c')!, /at most 256/);
  assert.match(passwordProblem('person@example.com', 'Person@Example.com')!, /email/);
  assert.match(passwordProblem('aaaaaaaaaaaaaaaa', 'a@b.c')!, /different/);
  assert.match(passwordProblem('a long one\u0000with a nul', 'a@b.c')!, /cannot be used/);
  // Length counts characters, not UTF-16 units: 12 emoji are 12 characters.
  assert.equal(passwordProblem('🔑🗝️🔐🔒🔓🧷📎🧩🎯🎲🎈🎁', 'a@b.c'), null);
});

test('scrypt hashes: salted, verified in constant time, normalised Unicode; a tampered or foreign hash never verifies', async () => {
  const cost = { N: 2 ** 14, r: 8, p: 1 }; // cheap for the test; the service uses SCRYPT_COST
  const a = await hashPassword('café au lait tous les jours', cost);
  const b = await hashPassword('café au lait tous les jours', cost);
  assert.match(a, /^scrypt\$16384\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
  assert.notEqual(a, b, 'a salt of its own');
  assert.equal(await verifyPassword('café au lait tous les jours', a), true);
  assert.equal(await verifyPassword('cafe\u0301 au lait tous les jours', a), true, 'the decomposed é is the same password');
  assert.equal(await verifyPassword('café au lait tous les jour', a), false);
  const parts = a.split('$');
  const flipped = [
    ...parts.slice(0, 5),
    Buffer.from(Buffer.from(parts[5], 'base64url').map((x, i) => (i === 0 ? x ^ 1 : x))).toString('base64url'),
  ].join('$');
  assert.equal(await verifyPassword('café au lait tous les jours', flipped), false);
  assert.equal(await verifyPassword('x', 'bcrypt$whatever'), false);
  assert.equal(await verifyPassword('x', 'scrypt$1073741824$8$1$AAAA$AAAA'), false, 'a cost out of bounds is refused, not spent');
});

test('keys from OAUTH_SECRET: the same secret gives the same ES256 key everywhere; each rotation value adds one', () => {
  const a = signingJwk('first-secret-of-at-least-32-characters');
  assert.deepEqual(signingJwk('first-secret-of-at-least-32-characters'), a);
  const b = signingJwk('second-secret-of-at-least-32-characters');
  assert.notEqual(a.d, b.d);
  assert.notEqual(a.kid, b.kid);
  const privateKey = crypto.createPrivateKey({ key: { ...a }, format: 'jwk' });
  const publicKey = crypto.createPublicKey({ key: { kty: a.kty, crv: a.crv, x: a.x, y: a.y }, format: 'jwk' });
  const signature = crypto.sign('sha256', Buffer.from('hello'), privateKey);
  assert.ok(crypto.verify('sha256', Buffer.from('hello'), publicKey, signature), 'a valid P-256 key pair');
  const rotated = signingKeys('second-secret-of-at-least-32-characters first-secret-of-at-least-32-characters');
  assert.deepEqual(
    rotated.keys.map((k) => k.kid),
    [b.kid, a.kid],
  );
  const cookies = cookieKeys('new-one-of-at-least-32-characters,old-one-of-at-least-32-characters');
  assert.equal(cookies.length, 2);
  assert.notEqual(cookies[0], 'new-one-of-at-least-32-characters', 'derived, not the secret itself');
});

test('a pair throttle refuses when either key is over its minute, counts both, and lets the minute slide', () => {
  let now = 1_000_000 * 60_000;
  const t = new PairThrottle(2, 3, () => now);
  t.count('addr', 'client');
  t.count('addr', 'client');
  assert.ok(t.blocked('addr', 'other'), 'the address is over');
  assert.equal(t.blocked('addr2', 'client'), null, 'the client is not yet');
  t.count('addr2', 'client');
  assert.ok(t.blocked('addr3', 'client'), 'now the client is over, from any address');
  assert.equal(t.blocked('addr3', null), null);
  now += 2 * 60_000;
  assert.equal(t.blocked('addr', 'client'), null, 'two minutes later, free again');
});

function context(cookie?: string): Koa.Context {
  const app = new Koa();
  const req = new http.IncomingMessage(new net.Socket());
  req.headers = cookie ? { cookie: `${CSRF_COOKIE}=${cookie}` } : {};
  const res = new http.ServerResponse(req);
  return app.createContext(req, res);
}

test('CSRF: a form token is bound to the browser’s secret and to what the form acts on', () => {
  const ctx = context();
  const token = csrfToken(ctx, 'interaction:abc', false);
  const set = ctx.response.get('Set-Cookie') as unknown as string[];
  const cookie = /oauth_csrf=([^;]+)/.exec(set.join(';'))![1];
  assert.match(set.join(';'), /httponly/i);
  assert.match(set.join(';'), /samesite=lax/i);
  assert.match(set.join(';'), /path=\/oauth/i);
  const same = context(cookie);
  assert.equal(csrfToken(same, 'interaction:abc', false), token, 'the same secret, the same token');
  assert.equal(csrfValid(same, 'interaction:abc', token), true);
  assert.equal(csrfValid(same, 'interaction:other', token), false, 'another form');
  assert.equal(csrfValid(context('B'.repeat(43)), 'interaction:abc', token), false, 'another browser');
  assert.equal(csrfValid(context(), 'interaction:abc', token), false, 'no cookie');
  assert.equal(csrfValid(same, 'interaction:abc', undefined), false);
  assert.equal(csrfValid(same, 'interaction:abc', token.slice(1)), false);
  const production = context();
  csrfToken(production, 'invite:x', true);
  assert.match((production.response.get('Set-Cookie') as unknown as string[]).join(';'), /secure/i, 'Secure in production');
});

test('the pages escape what a client or a person wrote, tick exactly the contract’s six, and frame nowhere', () => {
  assert.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  const html = consentPage({
    client: { name: '<img src=x onerror=alert(1)>', redirectHost: 'evil"host' },
    action: '/oauth/interaction/u/consent',
    csrf: 't',
    accountName: 'Acme & Sons',
    personName: 'Amina',
    personEmail: 'a@b.c',
    resources: ['/mcp'],
    requested: new Set(['mcp:send']),
  });
  assert.doesNotMatch(html, /<img/);
  assert.match(html, /Acme &amp; Sons/);
  const checked = [...html.matchAll(/value="([^"]+)" id="[^"]+" checked/g)].map((m) => m[1]);
  assert.deepEqual(checked, [...PRE_TICKED_SCOPES]);
  assert.match(html, /Send<em class="tag">asked for/);
  const headers = pageHeaders(formTargetOf('http://127.0.0.1:8123/cb?x'));
  assert.match(headers['Content-Security-Policy'], /form-action 'self' http:\/\/127\.0\.0\.1:8123;/);
  assert.match(headers['Content-Security-Policy'], /frame-ancestors 'none'/);
  assert.match(headers['Content-Security-Policy'], /style-src 'sha256-[A-Za-z0-9+/=]+'/);
  assert.deepEqual(formTargetOf('com.example.app:/cb'), ['com.example.app:']);
  assert.deepEqual(formTargetOf('not a url'), []);
  // The one stylesheet matches the hash the policy allows.
  const css = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
  assert.ok(headers['Content-Security-Policy'].includes(crypto.createHash('sha256').update(css).digest('base64')));
});
