import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import pg from 'pg';
import { API_URL, admin, api } from '../support/stack.js';
import { toolNames, withMcpServer } from '../support/mcp.js';
import { personWithPassword, type SignedPerson } from '../support/people.js';
import {
  Browser,
  actionOf,
  authorizeThroughPages,
  authorizeUrl,
  clientId,
  codeFor as codeAt,
  connect as connectTo,
  csrfOf,
  exchange,
  mcpInitialize,
  pkce,
  refresh,
  resourceOf,
  revoke,
  signedIn,
} from '../support/oauth.js';
import { CAPABILITY_SCOPES, ELEVATION_SCOPES, PRE_TICKED_SCOPES } from '../../domain/oauth/index.js';

// The MCP authorization server end to end on the real stack (issue 27, points 1-3 and the attacks
// of point 7 that concern it; sign-in alone is oauth-sign-in.test.ts, the other attacks
// oauth-attacks.test.ts): a client registers, a person signs in and consents on the pages, the
// code is exchanged with PKCE for tokens bound to one MCP endpoint, the token opens that endpoint
// and no other, refresh tokens rotate and a reused one revokes the connection, revocation holds on
// the next request. Every wrong step is an OAuth error or a page, never a 500 and never a token.

const CONTACTS = resourceOf('contacts');

/** A client connected for `who` to /mcp/v1/contacts through the pages (`opts.scopes`: the ticks). */
const connect = (who: SignedPerson, opts: Parameters<typeof connectTo>[2] = {}) => connectTo(who, CONTACTS, opts);
/** A registered client and a code for `who` at /mcp/v1/contacts. */
const codeFor = (who: SignedPerson) => codeAt(who, CONTACTS);
/** The code exchanged at /mcp/v1/contacts, as its client sends it. */
const redeem = (c: Parameters<typeof exchange>[0], over: Record<string, string> = {}) => exchange(c, CONTACTS, over);
const status = async (bearer: string, endpoint = '/mcp/v1/contacts') => (await mcpInitialize(endpoint, bearer)).status;
const refreshError = async (client: string, refreshToken: string) => (await refresh(client, refreshToken)).body.error;

test('the whole flow: register, sign in, consent, code with PKCE, /mcp/v1/contacts, refresh rotates, a reused refresh token revokes, revoke', async () => {
  const who = await personWithPassword();
  const client = await clientId();
  const { verifier, challenge } = pkce();
  const back = await authorizeThroughPages(
    new Browser(),
    authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS, state: 'xyz' }),
    who,
  );
  assert.equal(back.get('state'), 'xyz');
  assert.equal(back.get('iss'), API_URL, 'RFC 9207: the issuer comes back with the code');

  const issued = await redeem({ client, verifier, code: back.get('code')! });
  assert.equal(issued.status, 200, issued.text);
  assert.equal(issued.headers.get('cache-control'), 'no-store');
  const first = issued.body;
  assert.equal(first.token_type, 'Bearer');
  assert.equal(first.expires_in, 3600);
  assert.match(first.access_token, /^[A-Za-z0-9_-]{43}$/, 'an opaque access token');
  assert.ok(first.refresh_token);
  // The page's ticks as they stood (exactly the contract's six) and mcp:use.
  assert.deepEqual(first.scope.split(' ').sort(), ['mcp:use', ...PRE_TICKED_SCOPES].sort());

  // The token opens the endpoint it was issued for, as its person, in their account.
  assert.equal(await status(first.access_token), 200);
  assert.ok((await toolNames('contacts', first.access_token)).includes('list_contact_groups'));
  // A write needs mcp:write, never pre-ticked (oauth-scopes.test.ts): a connection the person allowed it on writes.
  const writer = await connect(who, { scopes: [...PRE_TICKED_SCOPES, 'mcp:write'] });
  const made = await withMcpServer('contacts', writer.tokens.access_token, (c) =>
    c.callTool({ name: 'create_contact_group', arguments: { name: 'From the assistant' } }),
  );
  assert.notEqual(made.isError, true, JSON.stringify(made));
  const groups = await api('GET', '/api/v3/contact-groups', who.token);
  assert.ok(JSON.stringify(groups.body).includes('From the assistant'), 'written in the person’s own account');

  // And no other endpoint: bound to /mcp/v1/contacts (RFC 8707), refused with the other's metadata.
  for (const other of ['/mcp/v1/payments', '/mcp']) {
    const r = await mcpInitialize(other, first.access_token);
    assert.equal(r.status, 401, other);
    const challenge = r.headers.get('www-authenticate') ?? '';
    assert.ok(challenge.includes(`resource_metadata="${API_URL}/.well-known/oauth-protected-resource${other}"`), challenge);
    assert.match(challenge, /error="invalid_token".*another MCP endpoint/);
  }

  // Refresh: a new access token and a new refresh token (rotation); the new ones work.
  const refreshed = await refresh(client, first.refresh_token);
  assert.equal(refreshed.status, 200, refreshed.text);
  const second = refreshed.body;
  assert.notEqual(second.refresh_token, first.refresh_token);
  assert.notEqual(second.access_token, first.access_token);
  assert.equal(second.scope, first.scope);
  assert.equal(await status(second.access_token), 200);

  // The old refresh token again: refused, and the whole connection with it (reuse detection).
  const reused = await refresh(client, first.refresh_token);
  assert.equal(reused.status, 400);
  assert.equal(reused.body.error, 'invalid_grant');
  assert.equal(await refreshError(client, second.refresh_token), 'invalid_grant');
  for (const t of [first.access_token, second.access_token]) assert.equal(await status(t), 401);

  // Revocation (RFC 7009) of a fresh connection: the access token, then the refresh token.
  const again = await connect(who);
  assert.equal((await revoke({ token: again.tokens.access_token, client_id: again.client })).status, 200);
  assert.equal(await status(again.tokens.access_token), 401, 'refused on the next request');
  assert.equal(
    await refreshError(again.client, again.tokens.refresh_token),
    'invalid_grant',
    'revoking the access token ended the connection it belonged to',
  );
  const third = await connect(who);
  assert.equal(
    (await revoke({ token: third.tokens.refresh_token, client_id: third.client, token_type_hint: 'refresh_token' })).status,
    200,
  );
  assert.equal(await refreshError(third.client, third.tokens.refresh_token), 'invalid_grant');
  assert.equal(await status(third.tokens.access_token), 401);
  // A token of unknown value, or another client's, is answered 200 and nothing happens to it (RFC 7009 section 2.2).
  const fourth = await connect(who);
  assert.equal((await revoke({ token: 'no-such-token', client_id: fourth.client })).status, 200);
  assert.equal((await revoke({ token: fourth.tokens.access_token, client_id: again.client })).status, 200);
  assert.equal(await status(fourth.tokens.access_token), 200, 'another client cannot revoke it');
});

test('tokens and codes are stored only as SHA-256 hashes: no row holds one in clear', async () => {
  const who = await personWithPassword();
  const c = await codeFor(who);
  const issued = (await redeem(c)).body;
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  try {
    for (const secret of [c.code, issued.access_token, issued.refresh_token]) {
      const clear = await db.query(`select model from oauth_records where payload::text like $1 or id_hash = $2 or grant_id = $2`, [
        `%${secret}%`,
        secret,
      ]);
      assert.equal(clear.rowCount, 0, `found in clear: ${JSON.stringify(clear.rows)}`);
      const hashed = await db.query('select model from oauth_records where id_hash = $1', [
        crypto.createHash('sha256').update(secret).digest('hex'),
      ]);
      assert.equal(hashed.rowCount, 1, 'kept under its hash');
    }
  } finally {
    await db.end();
  }
});

test('the consent page: the client, where it returns, the account; exactly the six capabilities ticked, no elevation; the ticks are the grant', async () => {
  const who = await personWithPassword({ name: `Consent Co ${Date.now()}` });
  const client = await clientId({ client_name: 'Claude <script>' });
  const { verifier, challenge } = pkce();
  const browser = new Browser();
  // The client asks for messaging and send: marked on the page, never ticked for it.
  const page = await signedIn(
    browser,
    authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS, scope: 'mcp:messaging mcp:send' }),
    who,
  );
  assert.equal(page.status, 200);
  assert.match(page.text, /id="client-name">Claude &lt;script&gt;</, 'the client’s name, escaped');
  assert.match(page.text, /id="redirect-host">127\.0\.0\.1:9</);
  assert.match(page.text, new RegExp(`id="account-name">Consent Co`));
  assert.match(page.text, /id="resources">\/mcp\/v1\/contacts</);
  const ticked = [...page.text.matchAll(/name="scope" value="([^"]+)" id="[^"]+" checked/g)].map((m) => m[1]);
  assert.deepEqual(ticked.sort(), [...PRE_TICKED_SCOPES].sort());
  const listed = [...page.text.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);
  assert.deepEqual(listed, [...CAPABILITY_SCOPES, ...ELEVATION_SCOPES], 'every capability and elevation scope is offered');
  assert.match(page.text, /Messaging<em class="tag">asked for<\/em>/);
  assert.match(page.text, /Send<em class="tag">asked for<\/em>/);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.match(csp, /form-action 'self' http:\/\/127\.0\.0\.1:9/);
  assert.doesNotMatch(page.text, /<script|https?:\/\/(?!127\.0\.0\.1)[a-z]/i, 'nothing loaded from anywhere');

  // The person unticks all but contacts and ticks send: that is what the token carries, with mcp:use.
  const decided = await browser.go(actionOf(page.text, 'consent'), {
    form: { csrf: csrfOf(page.text), decision: 'approve', scope: ['mcp:contacts', 'mcp:send', 'not-a-scope', 'openid'] },
  });
  const back = new URL((await browser.follow(decided.location!)).location!);
  const issued = await redeem({ client, verifier, code: back.searchParams.get('code')! });
  assert.equal(issued.status, 200, issued.text);
  assert.deepEqual(issued.body.scope.split(' ').sort(), ['mcp:contacts', 'mcp:send', 'mcp:use']);
});

test('deny goes back to the client with access_denied and no code', async () => {
  const who = await personWithPassword();
  const client = await clientId();
  const { challenge } = pkce();
  const back = await authorizeThroughPages(
    new Browser(),
    authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS, state: 's-deny' }),
    who,
    { decision: 'deny' },
  );
  assert.equal(back.get('error'), 'access_denied');
  assert.equal(back.get('code'), null);
  assert.equal(back.get('state'), 's-deny');
});

test('a code used twice: the second is refused and revokes what the first issued', async () => {
  const who = await personWithPassword();
  const c = await codeFor(who);
  const first = await redeem(c);
  assert.equal(first.status, 200);
  const second = await redeem(c);
  assert.equal(second.status, 400);
  assert.equal(second.body.error, 'invalid_grant');
  assert.equal(second.body.access_token, undefined);
  assert.equal(await status(first.body.access_token), 401);
  assert.equal(await refreshError(c.client, first.body.refresh_token), 'invalid_grant');
});

test('a code with a wrong verifier, another redirect, another resource or another client gets no token', async () => {
  const who = await personWithPassword();
  const c = await codeFor(who);
  const other = await clientId();
  const attempts: [Record<string, string>, string][] = [
    [{ code_verifier: pkce().verifier }, 'invalid_grant'],
    [{ code_verifier: 'short' }, 'invalid_request'],
    [{ redirect_uri: 'http://127.0.0.1:9/callback/other' }, 'invalid_grant'],
    [{ client_id: other }, 'invalid_grant'],
  ];
  for (const [over, error] of attempts) {
    const r = await redeem(c, over);
    assert.equal(r.status, 400, `${JSON.stringify(over)}: ${r.text}`);
    assert.equal(r.body.error, error, JSON.stringify(over));
    assert.equal(r.body.access_token, undefined);
  }
  // The right one still works: none of those consumed it.
  assert.equal((await redeem(c)).status, 200);
  // A resource other than the one the code was issued for: invalid_target (the provider has consumed the code by then).
  for (const resource of [resourceOf('payments'), resourceOf(null), 'https://elsewhere.example/mcp']) {
    const r = await redeem(await codeFor(who), { resource });
    assert.equal(r.status, 400, `${resource}: ${r.text}`);
    assert.equal(r.body.error, 'invalid_target', resource);
    assert.equal(r.body.access_token, undefined);
  }
});

test('a token acts in its own account only: another account’s records are not found', async () => {
  const a = await personWithPassword();
  const b = await personWithPassword();
  const group = await api('POST', '/api/v3/contact-groups', b.token, { name: 'B only' });
  assert.equal(group.status, 201, group.text);
  const { tokens } = await connect(a);
  const r = await withMcpServer('contacts', tokens.access_token, (c) =>
    c.callTool({ name: 'get_contact_group', arguments: { group: group.body.data.uid } }),
  );
  assert.equal(r.isError, true);
  assert.match(JSON.stringify(r.content), /not found/i);
  const listed = await withMcpServer('contacts', tokens.access_token, (c) => c.callTool({ name: 'list_contact_groups', arguments: {} }));
  assert.doesNotMatch(JSON.stringify(listed.structuredContent), /B only/);
});

test('a deactivated person’s token stops at once (401 with the metadata to sign in again) and cannot be refreshed', async () => {
  const who = await personWithPassword();
  const connected = await connect(who);
  assert.equal(await status(connected.tokens.access_token), 200);
  await admin('PATCH', `/accounts/${who.accountId}/users/${who.userId}`, { active: false });
  const refused = await mcpInitialize('/mcp/v1/contacts', connected.tokens.access_token);
  assert.equal(refused.status, 401);
  assert.match(refused.body.message, /deactivated/);
  assert.equal(
    refused.headers.get('www-authenticate'),
    `Bearer realm="mcp", error="invalid_token", error_description="The person who allowed this connection is deactivated.", ` +
      `resource_metadata="${API_URL}/.well-known/oauth-protected-resource/mcp/v1/contacts"`,
  );
  assert.equal(
    await refreshError(connected.client, connected.tokens.refresh_token),
    'invalid_grant',
    'no new token for a deactivated person',
  );
});

test('consent CSRF: a post without the form’s token, with another’s, or from another browser changes nothing and gives no code', async () => {
  const who = await personWithPassword();
  const client = await clientId();
  const { challenge } = pkce();
  const url = authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS });
  const victim = new Browser();
  const page = await signedIn(victim, url, who);
  const action = actionOf(page.text, 'consent');
  const good = csrfOf(page.text);

  // Another interaction's token, in the same browser.
  const other = await new Browser().follow(url);
  const forged: Record<string, string>[] = [
    { decision: 'approve', scope: 'mcp:send' },
    { decision: 'approve', scope: 'mcp:send', csrf: '' },
    { decision: 'approve', scope: 'mcp:send', csrf: good.slice(0, -2) + 'AA' },
    { decision: 'approve', scope: 'mcp:send', csrf: csrfOf(other.text) },
  ];
  for (const form of forged) {
    const r = await victim.go(action, { form });
    assert.equal(r.status, 403, JSON.stringify(form));
    assert.equal(r.location, null);
    assert.match(r.text, /This form has expired/);
  }
  // Posted by another site: the browser sends its SameSite=Lax cookies with no cross-site POST.
  const crossSite = await new Browser().go(action, { form: { decision: 'approve', csrf: good } });
  assert.equal(crossSite.status, 400);
  assert.equal(crossSite.location, null);
  // The real form still works afterwards, as it was.
  const decided = await victim.go(action, { form: { csrf: good, decision: 'approve', scope: 'mcp:contacts' } });
  assert.equal(decided.status, 303);
  const back = await victim.follow(decided.location!);
  assert.ok(new URL(back.location!).searchParams.get('code'));
});

test('one email in two accounts: the app acts in the account the person chose', async () => {
  const a = await personWithPassword({ name: `First ${Date.now()}` });
  const b = await personWithPassword({ name: `Second ${Date.now()}` });
  const user = await admin('POST', `/accounts/${b.accountId}/users`, { email: a.email, name: 'Same person', permissions: ['*'] });
  assert.equal(user.status, 201, user.text);
  await admin('PUT', `/accounts/${b.accountId}/users/${user.body.data.id}/password`, { password: a.password });
  const client = await clientId();
  const { verifier, challenge } = pkce();
  const browser = new Browser();
  const chooser = await signedIn(browser, authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS }), a);
  assert.equal(chooser.status, 200);
  assert.match(chooser.text, /First .*Second|Second .*First/s);
  const choice = `${b.accountId}.${user.body.data.id}`;
  assert.match(chooser.text, new RegExp(`value="${choice.replace('.', '\\.')}"`));
  const forged = await browser.go(actionOf(chooser.text, 'choose-account'), {
    form: { csrf: csrfOf(chooser.text), subject: `${b.accountId}.${b.userId}` },
  });
  assert.equal(forged.status, 403, 'only a listed choice');
  const chosen = await browser.go(actionOf(chooser.text, 'choose-account'), { form: { csrf: csrfOf(chooser.text), subject: choice } });
  assert.equal(chosen.status, 303);
  const consent = await browser.follow(chosen.location!);
  assert.match(consent.text, /id="account-name">Second/);
  const decided = await browser.go(actionOf(consent.text, 'consent'), {
    form: { csrf: csrfOf(consent.text), decision: 'approve', scope: ['mcp:contacts', 'mcp:write'] },
  });
  const code = new URL((await browser.follow(decided.location!)).location!).searchParams.get('code')!;
  const issued = await redeem({ client, verifier, code });
  const made = await withMcpServer('contacts', issued.body.access_token, (c) =>
    c.callTool({ name: 'create_contact_group', arguments: { name: 'In the second' } }),
  );
  assert.notEqual(made.isError, true, JSON.stringify(made));
  assert.match(JSON.stringify((await api('GET', '/api/v3/contact-groups', b.token)).body), /In the second/);
  assert.doesNotMatch(JSON.stringify((await api('GET', '/api/v3/contact-groups', a.token)).body), /In the second/);
});
