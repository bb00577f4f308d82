import type Koa from 'koa';
import type Router from '@koa/router';
import type Provider from 'oidc-provider';
import { HttpError } from '../http/errors.js';
import { bodyText, mediaTypeOf, nestsDeeperThan, readRawBody } from '../http/body.js';
import { checkRegistration, requestedScopeForConsent, REGISTRATION_LIMITS } from '../../domain/oauth/index.js';
import type { Logger } from '../../logger.js';
import { CLIENT_SCOPE_PARAM, OAUTH_ROUTES } from './provider.js';
import type { OAuthThrottles } from './throttles.js';

// The provider's own endpoints, served inside the API's Koa app: each is a route of the API's router
// (so it is logged, counted and answers 405 like any other), and hands the request to oidc-provider
// after the checks that are ours: the throttles, registration's size and shape, and the scope an
// authorization request carries to the consent page.

/** A form body of the token and revocation endpoints is never near this (a code, a verifier, a token). */
const TOKEN_FORM_BYTES = 16 * 1024;

/** An OAuth error answer (RFC 6749 section 5.2 shape), never cached. */
function oauthError(ctx: Koa.Context, status: number, error: string, description: string, headers: Record<string, string> = {}): void {
  ctx.status = status;
  ctx.set('Cache-Control', 'no-store');
  for (const [k, v] of Object.entries(headers)) ctx.set(k, v);
  ctx.body = { error, error_description: description };
}

/** Reads a body the door checks before the provider sees it, and leaves it where the provider reads an already-read body. */
async function takeBody(ctx: Koa.Context, limit: number): Promise<Buffer> {
  const raw = await readRawBody(ctx, limit);
  (ctx.req as typeof ctx.req & { body?: Buffer }).body = raw;
  return raw;
}

export function mountProvider(router: Router, provider: Provider, throttles: OAuthThrottles, log: Logger): void {
  // The provider is a Koa application of its own: its errors are ours to log (Koa prints them otherwise).
  (provider as unknown as NodeJS.EventEmitter).on('error', (err: Error) => log.warn({ err }, 'oauth provider request failed'));
  const callback = provider.callback();
  const toProvider = async (ctx: Koa.Context) => {
    ctx.respond = false;
    await callback(ctx.req, ctx.res);
  };
  const serve = (route: string) => async (ctx: Koa.Context) => {
    ctx.state.route = route;
    await toProvider(ctx);
  };

  // RFC 8414 metadata, and the OpenID Connect name of it some clients try first.
  router.get('/.well-known/oauth-authorization-server', serve('GET /.well-known/oauth-authorization-server'));
  router.get('/.well-known/openid-configuration', serve('GET /.well-known/openid-configuration'));
  router.get(OAUTH_ROUTES.jwks, serve(`GET ${OAUTH_ROUTES.jwks}`));
  for (const path of [
    '/.well-known/oauth-authorization-server',
    '/.well-known/openid-configuration',
    OAUTH_ROUTES.jwks,
    OAUTH_ROUTES.token,
    OAUTH_ROUTES.revocation,
  ])
    router.options(path, serve(`OPTIONS ${path}`));

  router.get(OAUTH_ROUTES.authorization, async (ctx) => {
    ctx.state.route = `GET ${OAUTH_ROUTES.authorization}`;
    // The consent page lists every MCP scope and the person's ticks decide the grant, whatever the
    // client named (domain/oauth/scopes.ts requestedScopeForConsent); what it named travels beside, marked on the page.
    const query = new URLSearchParams(ctx.querystring);
    const scopes = query.getAll('scope');
    if (scopes.length <= 1) {
      query.delete(CLIENT_SCOPE_PARAM);
      query.set(CLIENT_SCOPE_PARAM, scopes[0] ?? '');
      query.set('scope', requestedScopeForConsent(scopes[0]));
      ctx.req.url = `${ctx.path}?${query.toString()}`;
    }
    await toProvider(ctx);
  });
  router.get(`${OAUTH_ROUTES.authorization}/:uid`, serve(`GET ${OAUTH_ROUTES.authorization}/{uid}`));

  for (const [path, name] of [
    [OAUTH_ROUTES.token, 'token'],
    [OAUTH_ROUTES.revocation, 'revocation'],
  ] as const) {
    router.post(path, async (ctx) => {
      ctx.state.route = `POST ${path}`;
      let raw: Buffer;
      try {
        raw = await takeBody(ctx, TOKEN_FORM_BYTES);
      } catch (err) {
        if (err instanceof HttpError && err.status === 413)
          return oauthError(ctx, 413, 'invalid_request', `The ${name} request may not be larger than ${TOKEN_FORM_BYTES} bytes.`);
        throw err;
      }
      const clientId = clientIdOf(ctx, raw);
      const refusal = throttles.token.blocked(ctx.ip, clientId);
      if (refusal)
        return oauthError(
          ctx,
          429,
          'temporarily_unavailable',
          `Too many ${name} requests from this address or for this client; try again later.`,
          {
            'Retry-After': String(refusal.retryAfter),
          },
        );
      throttles.token.count(ctx.ip, clientId);
      if (name === 'token') {
        const target = await refreshTargetRefusal(provider, raw, clientId);
        if (target) return oauthError(ctx, 400, 'invalid_target', target);
      }
      await toProvider(ctx);
    });
  }

  router.post(OAUTH_ROUTES.registration, async (ctx) => {
    ctx.state.route = `POST ${OAUTH_ROUTES.registration}`;
    const refusal = throttles.registration.blocked(ctx.ip);
    if (refusal)
      return oauthError(ctx, 429, 'temporarily_unavailable', 'Too many registrations from this address; try again later.', {
        'Retry-After': String(refusal.retryAfter),
      });
    throttles.registration.fail(ctx.ip);
    if (mediaTypeOf(ctx.get('content-type')) !== 'application/json')
      return oauthError(ctx, 400, 'invalid_client_metadata', 'Send the client metadata as application/json.');
    let text: string;
    try {
      text = bodyText(await readRawBody(ctx, REGISTRATION_LIMITS.bodyBytes));
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      return oauthError(
        ctx,
        err.status === 413 ? 413 : 400,
        'invalid_client_metadata',
        err.status === 413 ? `The registration request may not be larger than ${REGISTRATION_LIMITS.bodyBytes} bytes.` : err.message,
      );
    }
    if (nestsDeeperThan(text, REGISTRATION_LIMITS.depth))
      return oauthError(
        ctx,
        400,
        'invalid_client_metadata',
        `The registration request may not nest deeper than ${REGISTRATION_LIMITS.depth} levels.`,
      );
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return oauthError(ctx, 400, 'invalid_client_metadata', 'The registration request is not valid JSON.');
    }
    const checked = checkRegistration(body);
    if ('refused' in checked) return oauthError(ctx, 400, checked.refused.error, checked.refused.description);
    (ctx.req as typeof ctx.req & { body?: Buffer }).body = Buffer.from(JSON.stringify(checked.metadata));
    await toProvider(ctx);
  });
}

/**
 * A refresh request naming a resource its refresh token was not issued for: the provider checks
 * that only after it has rotated the token, so the client would lose the new one it is never sent
 * and its next refresh would count as a reuse and end the connection. Refused here first, nothing
 * spent. Null when the request is not that (the provider answers everything else).
 */
async function refreshTargetRefusal(provider: Provider, raw: Buffer, clientId: string | null): Promise<string | null> {
  const form = new URLSearchParams(raw.toString('utf8'));
  const resources = form.getAll('resource');
  const value = form.get('refresh_token');
  if (form.get('grant_type') !== 'refresh_token' || resources.length === 0 || !value) return null;
  const refreshToken = await provider.RefreshToken.find(value, { ignoreExpiration: true });
  if (!refreshToken || refreshToken.clientId !== clientId) return null;
  // A token is for one MCP endpoint; the provider would resolve several to its default, /mcp.
  if (resources.length > 1) return 'Name one resource: an access token is issued for one MCP endpoint.';
  return refreshToken.resourceIndicators.has(resources[0]) ? null : 'The refresh token was not issued for this resource.';
}

/** The client a token or revocation request names (in the form, or as HTTP Basic's user); null when it names none. */
function clientIdOf(ctx: Koa.Context, raw: Buffer): string | null {
  const fromForm = new URLSearchParams(raw.toString('utf8')).get('client_id');
  if (fromForm) return fromForm.slice(0, 2048);
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(ctx.get('authorization'));
  if (!basic) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const user = decoded.slice(0, Math.max(0, decoded.indexOf(':')));
  try {
    return decodeURIComponent(user).slice(0, 2048) || null;
  } catch {
    return null;
  }
}
