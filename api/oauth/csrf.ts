import crypto from 'node:crypto';
import type Koa from 'koa';

// CSRF protection of the authorization server's forms: a random secret per browser session in a
// cookie only this site's pages can make requests with, and in each form a token derived from it
// and from what the form acts on (the interaction, the invitation). A forged post from another site
// cannot know the token (it cannot read our cookie or our page); a token of one form is no good in
// another. The cookie is HttpOnly, SameSite=Lax and, in production, Secure; it lives for the browser
// session and only under /oauth.

export const CSRF_COOKIE = 'oauth_csrf';
const COOKIE_PATH = '/oauth';

const tokenFor = (secret: string, purpose: string) => crypto.createHmac('sha256', secret).update(purpose).digest('base64url');

/**
 * Secure in production whatever the connection looks like here (TLS ends at a proxy in front; the
 * browser reached the https PUBLIC_BASE_URL), else Secure when the request came over https.
 */
function cookieOptions(ctx: Koa.Context, production: boolean) {
  if (production) ctx.cookies.secure = true;
  return {
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: production ? true : undefined,
    path: COOKIE_PATH,
    overwrite: true,
    signed: false,
  };
}

/** The form token for `purpose` (e.g. `interaction:<uid>`), making the browser's secret first when it has none. */
export function csrfToken(ctx: Koa.Context, purpose: string, production: boolean): string {
  let secret = ctx.cookies.get(CSRF_COOKIE, { signed: false });
  if (!secret || !/^[A-Za-z0-9_-]{43}$/.test(secret)) {
    secret = crypto.randomBytes(32).toString('base64url');
    ctx.cookies.set(CSRF_COOKIE, secret, cookieOptions(ctx, production));
  }
  return tokenFor(secret, purpose);
}

/** Whether a posted form's token is the one this browser's secret gives for `purpose` (constant time). */
export function csrfValid(ctx: Koa.Context, purpose: string, sent: unknown): boolean {
  const secret = ctx.cookies.get(CSRF_COOKIE, { signed: false });
  if (!secret || typeof sent !== 'string' || sent === '') return false;
  const expected = Buffer.from(tokenFor(secret, purpose));
  const given = Buffer.from(sent);
  return given.length === expected.length && crypto.timingSafeEqual(given, expected);
}
