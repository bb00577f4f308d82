import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import https from 'node:https';
import { execFileSync } from 'node:child_process';
import { privateStack } from '../support/private-stack.js';
import { personWithPassword } from '../support/people.js';
import { http } from '../support/stack.js';
import {
  REDIRECT,
  Browser,
  actionOf,
  authorizeThroughPages,
  authorizeUrl,
  csrfOf,
  mcpInitialize,
  pkce,
  resourceOf,
} from '../support/oauth.js';

// The authorization server's limits on an API of this test's own (the run's API has them raised):
// the token endpoint throttled per client address and per client, registration per address, sign-in
// failures per address and per email (refused without checking the password); codes and access
// tokens that expire; and Client ID Metadata Documents, fetched over https from a server this test
// runs (its certificate trusted by that API alone), with the fetch policy's refusals.

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oauth-cimd-'));
const cert = path.join(dir, 'cert.pem');
const key = path.join(dir, 'key.pem');
execFileSync(
  'openssl',
  [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    key,
    '-out',
    cert,
  ],
  { stdio: 'ignore' },
);

/** Client metadata documents by path, served over https by this test. */
const documents = new Map<string, { status?: number; body: string }>();
const docs = https.createServer({ cert: fs.readFileSync(cert), key: fs.readFileSync(key) }, (req, res) => {
  const doc = documents.get(req.url ?? '');
  res.writeHead(doc?.status ?? (doc ? 200 : 404), { 'content-type': 'application/json' });
  res.end(doc?.body ?? '{}');
});
await new Promise<void>((resolve) => docs.listen(0, '127.0.0.1', resolve));
const docsBase = `https://127.0.0.1:${(docs.address() as { port: number }).port}`;

const own = await privateStack(
  {
    OAUTH_TOKEN_REQUESTS_PER_MINUTE: '5',
    OAUTH_REGISTRATIONS_PER_MINUTE: '3',
    SIGN_IN_FAILURES_PER_MINUTE: '3',
    OAUTH_ACCESS_TOKEN_TTL_SECONDS: '3',
    OAUTH_CODE_TTL_SECONDS: '2',
    // Each request names its client address, as a proxy in front would.
    TRUSTED_PROXY_HOPS: '1',
    NODE_EXTRA_CA_CERTS: cert,
    ALLOW_LOOPBACK_DESTINATIONS: 'true',
  },
  { workers: 0 },
);
const base = own.apiUrl;
after(async () => {
  await own.stop();
  docs.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

let address = 10;
/** A fresh client address for a request (X-Forwarded-For, read behind TRUSTED_PROXY_HOPS=1). */
const nextAddress = () => `198.51.100.${++address}`;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

/** A registered client, from an address of its own (registration is throttled per address). */
async function newClient(body: Record<string, unknown> = {}): Promise<string> {
  const r = await http('POST', `${base}/oauth/register`, { body: { redirect_uris: [REDIRECT], ...body }, headers: from(nextAddress()) });
  assert.equal(r.status, 201, r.text);
  return r.body.client_id;
}

const tokenFrom = (ip: string, form: Record<string, string>) =>
  http('POST', `${base}/oauth/token`, {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...from(ip) },
  });

test('the token endpoint: every request counts, per address and per client; past the minute, 429 with Retry-After', async () => {
  const client = await newClient();
  const ip = nextAddress();
  const form = { grant_type: 'authorization_code', code: 'x', code_verifier: pkce().verifier, redirect_uri: REDIRECT, client_id: client };
  for (let i = 0; i < 5; i++) assert.equal((await tokenFrom(ip, form)).body.error, 'invalid_grant');
  const refused = await tokenFrom(ip, form);
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'temporarily_unavailable');
  assert.ok(Number(refused.headers.get('retry-after')) >= 1);
  // Another address is not held back by it.
  assert.equal((await tokenFrom(nextAddress(), form)).body.error, 'invalid_grant');
  // One client from many addresses: ten times the address limit, then refused wherever it comes from.
  const busy = await newClient();
  const busyForm = { ...form, client_id: busy };
  let refusedAt = 0;
  for (let i = 1; i <= 60 && !refusedAt; i++) if ((await tokenFrom(nextAddress(), busyForm)).status === 429) refusedAt = i;
  assert.equal(refusedAt, 51);
});

test('registration: a few a minute per address, then 429', async () => {
  const ip = nextAddress();
  const reg = () => http('POST', `${base}/oauth/register`, { body: { redirect_uris: [REDIRECT] }, headers: from(ip) });
  for (let i = 0; i < 3; i++) assert.equal((await reg()).status, 201);
  const refused = await reg();
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error, 'temporarily_unavailable');
  assert.equal(
    (await http('POST', `${base}/oauth/register`, { body: { redirect_uris: [REDIRECT] }, headers: from(nextAddress()) })).status,
    201,
  );
});

test('sign-in: after the failures of a minute, refused without checking the password, for the address and for the email', async () => {
  const who = await personWithPassword();
  const other = await personWithPassword();
  const client = await newClient();
  const { challenge } = pkce();
  const url = authorizeUrl({ client_id: client, code_challenge: challenge, resource: resourceOf('contacts', base) }, base);
  const attempt = async (ip: string, email: string, password: string) => {
    const browser = new Browser(base);
    const page = await browser.follow(url);
    return browser.go(actionOf(page.text, 'sign-in'), { form: { csrf: csrfOf(page.text), email, password }, headers: from(ip) });
  };
  const ip = nextAddress();
  for (let i = 0; i < 3; i++) assert.equal((await attempt(ip, who.email, 'a wrong password here')).status, 200);
  const right = await attempt(ip, who.email, who.password);
  assert.equal(right.status, 429, 'the right password is not even checked');
  assert.match(right.text, /Too many attempts/);
  assert.ok(Number(right.headers.get('retry-after')) >= 1);
  // The email is held from another address too; another person at a fresh address is not.
  assert.equal((await attempt(nextAddress(), who.email, who.password)).status, 429);
  const fine = await attempt(nextAddress(), other.email, other.password);
  assert.equal(fine.status, 303, fine.text.slice(0, 300));
});

test('an expired code and an expired access token are refused; a refresh token still renews', async () => {
  const who = await personWithPassword();
  const resource = resourceOf('contacts', base);
  const client = await newClient();
  const first = pkce();
  const late = await authorizeThroughPages(
    new Browser(base),
    authorizeUrl({ client_id: client, code_challenge: first.challenge, resource }, base),
    who,
  );
  await new Promise((r) => setTimeout(r, 3000));
  const expiredCode = await tokenFrom(nextAddress(), {
    grant_type: 'authorization_code',
    code: late.get('code')!,
    code_verifier: first.verifier,
    redirect_uri: REDIRECT,
    client_id: client,
    resource,
  });
  assert.equal(expiredCode.status, 400);
  assert.equal(expiredCode.body.error, 'invalid_grant');

  const second = pkce();
  const back = await authorizeThroughPages(
    new Browser(base),
    authorizeUrl({ client_id: client, code_challenge: second.challenge, resource }, base),
    who,
  );
  const issued = await tokenFrom(nextAddress(), {
    grant_type: 'authorization_code',
    code: back.get('code')!,
    code_verifier: second.verifier,
    redirect_uri: REDIRECT,
    client_id: client,
    resource,
  });
  assert.equal(issued.status, 200, issued.text);
  assert.equal(issued.body.expires_in, 3);
  await new Promise((r) => setTimeout(r, 4000));
  const expired = await mcpInitialize('/mcp/v1/contacts', issued.body.access_token, base);
  assert.equal(expired.status, 401);
  assert.match(expired.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  const renewed = await tokenFrom(nextAddress(), {
    grant_type: 'refresh_token',
    refresh_token: issued.body.refresh_token,
    client_id: client,
  });
  assert.equal(renewed.status, 200, renewed.text);
  assert.notEqual(renewed.body.access_token, issued.body.access_token);
});

test('a Client ID Metadata Document: the server fetches the https client_id, names the app from it and issues tokens to it', async () => {
  const who = await personWithPassword();
  const id = `${docsBase}/clients/assistant.json`;
  documents.set('/clients/assistant.json', {
    body: JSON.stringify({
      client_id: id,
      client_name: 'Metadata Assistant',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }),
  });
  const resource = resourceOf('contacts', base);
  const { verifier, challenge } = pkce();
  const browser = new Browser(base);
  const page = await browser.follow(authorizeUrl({ client_id: id, code_challenge: challenge, resource }, base));
  assert.equal(page.status, 200, page.text.slice(0, 400));
  assert.match(page.text, /id="client-name">Metadata Assistant</);
  const back = await authorizeThroughPages(browser, authorizeUrl({ client_id: id, code_challenge: challenge, resource }, base), who);
  const issued = await tokenFrom(nextAddress(), {
    grant_type: 'authorization_code',
    code: back.get('code')!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: id,
    resource,
  });
  assert.equal(issued.status, 200, issued.text);
  assert.equal((await mcpInitialize('/mcp/v1/contacts', issued.body.access_token, base)).status, 200);
});

test('client ID metadata documents that must not be used: an error page, never a redirect', async () => {
  const big = { client_id: `${docsBase}/big.json`, client_name: 'x'.repeat(6000), redirect_uris: [REDIRECT] };
  documents.set('/big.json', { body: JSON.stringify(big) });
  documents.set('/mismatch.json', { body: JSON.stringify({ client_id: `${docsBase}/other.json`, redirect_uris: [REDIRECT] }) });
  documents.set('/secret.json', {
    body: JSON.stringify({
      client_id: `${docsBase}/secret.json`,
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
    }),
  });
  documents.set('/http-redirect.json', {
    body: JSON.stringify({ client_id: `${docsBase}/http-redirect.json`, redirect_uris: ['http://evil.example/cb'] }),
  });
  documents.set('/gone.json', { status: 404, body: '{}' });
  documents.set('/redirects.json', { status: 302, body: '{}' });
  const { challenge } = pkce();
  for (const id of [
    `${docsBase}/big.json`,
    `${docsBase}/mismatch.json`,
    `${docsBase}/secret.json`,
    `${docsBase}/http-redirect.json`,
    `${docsBase}/gone.json`,
    `${docsBase}/redirects.json`,
    // The fetch policy: private and metadata addresses are never fetched.
    'https://10.1.2.3/client.json',
    'https://169.254.169.254/latest/meta-data',
    // Not https.
    `http://127.0.0.1:9/client.json`,
  ]) {
    const r = await new Browser(base).go(
      authorizeUrl({ client_id: id, code_challenge: challenge, resource: resourceOf(null, base) }, base),
      {
        headers: { accept: 'text/html' },
      },
    );
    assert.equal(r.location, null, `${id} redirected to ${r.location}`);
    assert.ok(r.status >= 400 && r.status < 500, `${id}: ${r.status}`);
    assert.match(r.text, /This connection cannot go on/, id);
  }
  // Registration stays as it was beside it.
  await newClient();
});
