import { test } from 'node:test';
import assert from 'node:assert/strict';
import { API_URL, admin, http } from '../support/stack.js';
import { personWithPassword, type SignedPerson } from '../support/people.js';
import { Browser, actionOf, authorizeUrl, clientId, csrfOf, pkce, resourceOf } from '../support/oauth.js';

// People sign in on the MCP authorization server's pages (issue 27, point 2): a password from an
// invitation link the operator makes, or one the operator sets; one generic message for every
// failure; the CSRF field on every form; a person with one email in several accounts chooses the
// account. A successful sign-in hands the authorization back to the provider, which goes on to
// consent.

const CONTACTS = resourceOf('contacts');

/** The sign-in page of a fresh authorization request, in a browser of its own. */
async function signInPage(browser = new Browser()) {
  const client = await clientId();
  const { challenge } = pkce();
  const page = await browser.follow(authorizeUrl({ client_id: client, code_challenge: challenge, resource: CONTACTS }));
  assert.equal(page.status, 200, page.text.slice(0, 300));
  assert.match(page.text, /id="sign-in"/);
  return { browser, page, action: actionOf(page.text, 'sign-in'), csrf: csrfOf(page.text) };
}

/** Signs in; answers the post's answer. */
async function signIn(who: Pick<SignedPerson, 'email' | 'password'>) {
  const { browser, action, csrf } = await signInPage();
  return browser.go(action, { form: { csrf, email: who.email, password: who.password } });
}

const errorOf = (html: string) => /id="error">([^<]+)</.exec(html)?.[1] ?? '';

test('the sign-in page: the app’s name, no script, nothing framed; a right password hands the authorization back to the provider', async () => {
  const who = await personWithPassword();
  const { page } = await signInPage();
  assert.match(page.text, /<h1>Sign in to connect Test Assistant<\/h1>/);
  const csp = page.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(page.headers.get('x-frame-options'), 'DENY');
  assert.equal(page.headers.get('cache-control'), 'no-store');
  assert.doesNotMatch(page.text, /<script/);
  const browser = new Browser();
  const { action, csrf } = await signInPage(browser);
  const signed = await browser.go(action, { form: { csrf, email: who.email, password: who.password } });
  assert.equal(signed.status, 303, signed.text.slice(0, 300));
  assert.match(signed.location ?? '', /^http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\/[A-Za-z0-9_-]+$|^\/oauth\/authorize\/[A-Za-z0-9_-]+$/);
  // The provider opens the sign-in session as it resumes: its cookie HttpOnly and SameSite=Lax
  // (Secure is added in production and over https; not on this plain-http test stack).
  const resumed = await browser.go(signed.location!);
  const session = resumed.headers.getSetCookie().find((c) => c.startsWith('oauth_session='));
  assert.ok(session, `no session cookie: ${resumed.headers.getSetCookie().join(' | ')}`);
  assert.match(session, /; httponly/i);
  assert.match(session, /; samesite=lax/i);
  assert.match(session, /; path=\//i);
});

test('one generic message for a wrong password, an unknown email, a person without a password and a deactivated person', async () => {
  const who = await personWithPassword();
  const other = await personWithPassword();
  const noPassword = await admin('POST', `/accounts/${other.accountId}/users`, {
    email: `nopw-${Date.now()}@example.com`,
    name: 'No password',
  });
  const tries: [string, string][] = [
    [who.email, 'not the password at all'],
    [`nobody-${Date.now()}@example.com`, who.password],
    [noPassword.body.data.email, who.password],
  ];
  const messages: string[] = [];
  for (const [email, password] of tries) {
    const r = await signIn({ email, password });
    assert.equal(r.status, 200);
    assert.equal(r.location, null);
    messages.push(errorOf(r.text));
  }
  await admin('PATCH', `/accounts/${who.accountId}/users/${who.userId}`, { active: false });
  const deactivated = await signIn(who);
  assert.equal(deactivated.location, null);
  messages.push(errorOf(deactivated.text));
  await admin('PATCH', `/accounts/${other.accountId}`, { status: 'suspended' });
  try {
    const suspended = await signIn(other);
    assert.equal(suspended.location, null, 'a suspended account’s people cannot connect apps');
    messages.push(errorOf(suspended.text));
  } finally {
    await admin('PATCH', `/accounts/${other.accountId}`, { status: 'active' });
  }
  assert.equal(new Set(messages).size, 1, `one message for every failure: ${messages.join(' | ')}`);
  assert.ok(messages[0].length > 10);
  // An empty form says what is missing, not whether the email exists.
  const { browser, action, csrf } = await signInPage();
  const empty = await browser.go(action, { form: { csrf, email: who.email, password: '' } });
  assert.equal(empty.status, 400);
  assert.match(errorOf(empty.text), /Enter your email and your password/);
});

test('sign-in CSRF and a stale interaction: refused as pages, never a redirect', async () => {
  const who = await personWithPassword();
  const { browser, action, csrf } = await signInPage();
  const forms: Record<string, string>[] = [
    { email: who.email, password: who.password },
    { email: who.email, password: who.password, csrf: csrf.slice(0, -2) + 'AA' },
  ];
  for (const form of forms) {
    const forged = await browser.go(action, { form });
    assert.equal(forged.status, 403, JSON.stringify(form));
    assert.equal(forged.location, null);
    assert.match(forged.text, /This form has expired/);
  }
  // From another browser (another site's form: no cookies of ours), even with the right field.
  const elsewhere = await new Browser().go(action, { form: { csrf, email: who.email, password: who.password } });
  assert.equal(elsewhere.status, 400);
  assert.match(elsewhere.text, /This sign-in has expired/);
  const unknown = await browser.go('/oauth/interaction/unknown-interaction');
  assert.equal(unknown.status, 400);
  assert.match(unknown.text, /This sign-in has expired/);
  const json = await browser.go(action, { method: 'POST', headers: { 'content-type': 'application/json' } });
  assert.equal(json.status, 415);
  // The page's own form still signs in.
  assert.equal((await browser.go(action, { form: { csrf, email: who.email, password: who.password } })).status, 303);
});

test('an invitation link: the person sets a password once and signs in with it; a used or replaced link is gone', async () => {
  const who = await personWithPassword();
  const invite = await admin('POST', `/accounts/${who.accountId}/users/${who.userId}/invite`, { expires_in_hours: 2 });
  assert.equal(invite.status, 201, invite.text);
  assert.equal(invite.headers.get('cache-control'), 'no-store');
  const url: string = invite.body.data.url;
  assert.ok(url.startsWith(`${API_URL}/oauth/invite/`));
  assert.ok(Date.parse(invite.body.data.expires_at) > Date.now() + 3600_000);
  const browser = new Browser();
  const page = await browser.go(url);
  assert.equal(page.status, 200);
  assert.match(page.text, new RegExp(who.email.replace(/[.]/g, '\\.')));
  assert.equal(page.headers.get('referrer-policy'), 'no-referrer');
  const action = actionOf(page.text, 'set-password');
  const csrf = csrfOf(page.text);
  const mismatch = await browser.go(action, { form: { csrf, password: 'a fresh long password', confirm: 'another one entirely' } });
  assert.equal(mismatch.status, 400);
  assert.match(mismatch.text, /not the same/);
  const weak = await browser.go(action, { form: { csrf, password: 'short', confirm: 'short' } });
  assert.equal(weak.status, 400);
  assert.match(weak.text, /at least 12 characters/);
  const forged = await new Browser().go(action, { form: { password: 'a forged long password', confirm: 'a forged long password' } });
  assert.equal(forged.status, 403);
  const password = 'the invited person’s own passphrase';
  const done = await browser.go(action, { form: { csrf, password, confirm: password } });
  assert.equal(done.status, 200, done.text);
  assert.match(done.text, /Your password is set/);
  assert.equal((await browser.go(url)).status, 404, 'used once');
  assert.equal((await browser.go(action, { form: { csrf, password, confirm: password } })).status, 404);
  // The new password signs in; the old one no longer does.
  assert.equal((await signIn({ email: who.email, password })).status, 303);
  assert.equal((await signIn(who)).status, 200);
  assert.equal((await http('GET', '/oauth/invite/not-a-token')).status, 404);
  const newer = await admin('POST', `/accounts/${who.accountId}/users/${who.userId}/invite`, {});
  const newest = await admin('POST', `/accounts/${who.accountId}/users/${who.userId}/invite`, {});
  assert.equal((await http('GET', newer.body.data.url)).status, 404, 'a new invitation ends the earlier one');
  assert.equal((await http('GET', newest.body.data.url)).status, 200);
  // A deactivated person's link does not work, and none can be made for them.
  await admin('PATCH', `/accounts/${who.accountId}/users/${who.userId}`, { active: false });
  assert.equal((await http('GET', newest.body.data.url)).status, 404);
  const refused = await admin('POST', `/accounts/${who.accountId}/users/${who.userId}/invite`, {});
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'user_inactive');
});

test('one email in two accounts: after the password, the person chooses the account, from the choices offered only', async () => {
  const a = await personWithPassword({ name: `First ${Date.now()}` });
  const b = await personWithPassword({ name: `Second ${Date.now()}` });
  const user = await admin('POST', `/accounts/${b.accountId}/users`, { email: a.email, name: 'Same person', permissions: ['*'] });
  assert.equal(user.status, 201, user.text);
  await admin('PUT', `/accounts/${b.accountId}/users/${user.body.data.id}/password`, { password: a.password });
  const { browser, action, csrf } = await signInPage();
  const chooser = await browser.go(action, { form: { csrf, email: a.email, password: a.password } });
  assert.equal(chooser.status, 200);
  assert.match(chooser.text, /First .*Second|Second .*First/s);
  const choice = `${b.accountId}.${user.body.data.id}`;
  assert.match(chooser.text, new RegExp(`value="${choice.replace('.', '\\.')}"`));
  const chooseAction = actionOf(chooser.text, 'choose-account');
  const forged = await browser.go(chooseAction, { form: { csrf: csrfOf(chooser.text), subject: `${b.accountId}.${b.userId}` } });
  assert.equal(forged.status, 403, 'only a listed choice');
  const noToken = await browser.go(chooseAction, { form: { subject: choice } });
  assert.equal(noToken.status, 403);
  const chosen = await browser.go(chooseAction, { form: { csrf: csrfOf(chooser.text), subject: choice } });
  assert.equal(chosen.status, 303);
});

test('the operator sets a password within its rules; an unknown user or account is 404', async () => {
  const who = await personWithPassword();
  const weak = await admin('PUT', `/accounts/${who.accountId}/users/${who.userId}/password`, { password: 'aaaaaaaaaaaaaaaa' });
  assert.equal(weak.status, 422);
  assert.ok(weak.body.errors.password);
  const same = await admin('PUT', `/accounts/${who.accountId}/users/${who.userId}/password`, { password: who.email });
  assert.equal(same.status, 422);
  const set = await admin('PUT', `/accounts/${who.accountId}/users/${who.userId}/password`, { password: 'a fine long password' });
  assert.equal(set.status, 200);
  assert.equal(set.body.data.user_id, who.userId);
  assert.ok(Date.parse(set.body.data.password_set_at) > 0);
  assert.equal(JSON.stringify(set.body).includes('a fine long password'), false, 'never echoed');
  assert.equal((await admin('PUT', `/accounts/${who.accountId}/users/999999/password`, { password: 'a fine long password' })).status, 404);
  assert.equal((await admin('POST', `/accounts/${who.accountId}/users/999999/invite`, {})).status, 404);
  assert.equal((await admin('POST', `/accounts/999999/users/${who.userId}/invite`, {})).status, 404);
  const other = await personWithPassword();
  assert.equal(
    (await admin('PUT', `/accounts/${other.accountId}/users/${who.userId}/password`, { password: 'a fine long password' })).status,
    404,
    'a user of another account',
  );
});
