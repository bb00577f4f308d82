import type Koa from 'koa';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { HttpError, forbidden } from './errors.js';
import type { AccountRow, Admission, AdmissionRow, KeyRow, RequestContext, UserRow } from './context.js';
import { hasPermission } from '../../domain/account/permissions.js';
import { createHash, timingSafeEqual } from 'node:crypto';
import { AuthFailureThrottle, rateDecision, windowStartOf, windowWeight, type RateDecision } from './ratelimit.js';
import { sweepOldWindows } from '../../services/platform/rate-windows.js';
import { admissionSql, contextAccount, contextKey, findCredential, touchKeyLastUsed } from '../../services/account/credentials.js';
import type { PersonCredentialRow } from '../../services/account/index.js';
import { admissionsInStatement, earlyReads } from '../../observability/metrics.js';
import { forgetAuthenticated, rememberAuthenticated, rememberedPrincipal, samePrincipal, speculativePrincipal } from './speculation.js';

export { MCP_PREFIX, hashToken, newSecret } from '../../services/platform/secrets.js';
import { MCP_PREFIX, hashToken, tokenHint } from '../../services/platform/secrets.js';

export interface Principal {
  account: AccountRow;
  key: KeyRow;
  user: UserRow | null;
}

/**
 * What an OAuth access token grants at the MCP door (api/oauth): the connection (its grant and
 * client), the scopes the person allowed, and the one MCP endpoint it was issued for.
 */
export interface OAuthGrant {
  grantId: string;
  clientId: string;
  scopes: readonly string[];
  /** The resource indicator (and audience) the token is bound to: an MCP endpoint's URL. */
  resource: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

/** An MCP caller admitted by an OAuth access token: the person who allowed the connection, their account, the grant. */
export interface OAuthPrincipal {
  account: AccountRow;
  user: UserRow;
  grant: OAuthGrant;
}

/** Who calls the MCP door: an MCP connection credential (svc_mcp_) or an OAuth access token. */
export type McpPrincipal = Principal | OAuthPrincipal;

/**
 * An access token as the MCP door found it (api/oauth/bearer.ts), in the statement that also read
 * the person it names and counted the request in its grant's window.
 */
export interface AccessTokenView {
  /** The person who allowed the connection, their account and the request's rate count. */
  person: PersonCredentialRow;
  clientId: string;
  grantId: string;
  scope: string;
  audience: readonly string[];
  expiresAt: number;
  /** Told when the token admitted a request (the grant's last use is recorded). */
  admitted?: () => void;
}

/** Reads an access token, its person and the request's count in one statement; null when no live token and person match. */
export type AccessTokenReader = (em: EntityManager, token: string, windowStart: number) => Promise<AccessTokenView | null>;

const unauthenticated = (message = 'Unauthenticated.') => new HttpError(401, message);

/** Reads only the Authorization header: a key in the query string is never looked at. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

export interface Authenticated extends Principal {
  /** The key's rate-limit window after this request was counted in it. */
  rate: RateDecision;
  /** The database's digest of this principal: a write's own statement admits only the same one (admittedInStatement). */
  fingerprint: string;
}

/**
 * One round trip per authenticated request: the key is looked up by its hash and, only when it is
 * admitted (right surface, not revoked, not expired, account active), its one-minute window is
 * counted (and the previous minute's count read, for the sliding window), all in one statement. A
 * refused token (401, or 403 for a suspended account) therefore counts against nobody's window. The refusal messages
 * are decided here from the same row, with expiry judged by the database clock.
 */
export async function authenticate(
  em: EntityManager,
  header: string | undefined,
  surface: 'rest' | 'mcp',
  rateLimitPerMinute: number,
  now = Date.now(),
  throttle: 'v3' | 'engine' = 'v3',
): Promise<Authenticated> {
  const token = bearerToken(header);
  if (!token) throw unauthenticated();
  const looksMcp = token.startsWith(MCP_PREFIX);
  if ((surface === 'rest') === looksMcp) throw unauthenticated('Unauthenticated.');
  const windowStart = windowStartOf(now);
  const row = await findCredential(em, { tokenHash: hashToken(token), surface, windowStart, throttle });
  if (!row || row.kind !== surface) throw unauthenticated();
  if (row.revoked_at) throw unauthenticated('API token has been revoked.');
  if (row.expired) throw unauthenticated('API token has expired.');
  if (row.status !== 'active') throw new HttpError(403, 'This account is suspended.', { reason: 'account_suspended' });
  if (!row.admitted || row.rate_count === null) throw new Error('authentication row admitted inconsistently');
  // last_used_at is informational: written at most once a minute per key, off the request's path and
  // outside the statement above, so that write never holds the key's hot rate-limit row. The guard
  // in the update keeps concurrent requests that all saw a stale value from writing it again.
  if (row.touch_due) touchKeyLastUsed(em, row.key_id);
  sweepOldWindows(em, windowStart);
  return {
    account: contextAccount(row),
    key: contextKey(row),
    user: row.user_id ? { id: row.user_id, active: row.user_active, permissions: row.user_permissions ?? [] } : null,
    rate: rateDecision(Number(row.rate_count), rateLimitPerMinute, windowStart, now, Number(row.rate_previous)),
    fingerprint: row.principal_fp,
  };
}

/**
 * Endpoint families added since 7 September 2026 act with the current permissions of the person
 * who issued the key; a key with no issuer (older keys) or a deactivated issuer is refused there.
 */
export function authorizeIssuer(p: Pick<Principal, 'user'>, permission: string | undefined): void {
  if (!p.user) throw forbidden('This API key has no issuing user; create a new key to use this endpoint.', 'issuer_required');
  if (!p.user.active) throw forbidden('The user who issued this API key is deactivated.', 'issuer_inactive');
  if (permission && !hasPermission(p.user.permissions, permission)) {
    throw forbidden(`This action requires the ${permission} permission.`, 'permission_denied');
  }
}

/**
 * The account caller of a request on the REST or the MCP surface: the bearer credential checked in
 * one round trip (key, account, issuer, this request counted in the key's window), the rate headers
 * set and the request refused over the limit, and the request context naming the credential as its
 * actor.
 */
export async function callerOf(
  ctx: Koa.Context,
  deps: { orm: MikroORM; config: Config; log: Logger },
  surface: 'rest' | 'mcp',
  logFields: Record<string, unknown> = {},
  /** The agent engine counts its requests in a window of its own, at its own limit. */
  throttle: 'v3' | 'engine' = 'v3',
): Promise<{ principal: Principal; rc: RequestContext; authenticated: Authenticated }> {
  const em = deps.orm.em.fork();
  const header = ctx.get('authorization');
  const limit = throttle === 'engine' ? deps.config.engineRateLimitPerMinute : deps.config.rateLimitPerMinute;
  // Checked whatever the failure throttle says: only a failure is answered by it (throttledFailure).
  const authenticated = await authenticate(em, header, surface, limit, Date.now(), throttle).catch((err: unknown) => {
    if (surface === 'rest') forgetAuthenticated(header);
    if (err instanceof HttpError && err.status === 401) throw throttledFailure(throttlesOf(deps.config).account, ctx, header) ?? err;
    throw err;
  });
  if (surface === 'rest' && throttle === 'v3') rememberAuthenticated(header, authenticated);
  const { rate, fingerprint: _fingerprint, ...principal } = authenticated;
  ctx.state.accountId = principal.account.id;
  answerRate(ctx, rate);
  return { principal, rc: contextOf(ctx, deps, surface, em, authenticated, logFields), authenticated };
}

/**
 * The MCP caller of an OAuth access token, in two round trips: the token found by its hash (it must
 * exist, be unexpired and unrevoked, and be bound to `resource`, the endpoint asked), then its person
 * with their account, the request counted in the grant's window (one per connection, as a key has
 * one). Refusals as the svc_mcp_ path words them: 401 for any token that does not admit (throttled
 * per address and hint like every failed authentication), 403 for a suspended account.
 */
export async function oauthCallerOf(
  ctx: Koa.Context,
  deps: CallerDeps,
  readToken: AccessTokenReader,
  resource: string,
  logFields: Record<string, unknown> = {},
): Promise<{ principal: OAuthPrincipal; rc: RequestContext }> {
  const header = ctx.get('authorization');
  const refuse = (message = 'Unauthenticated.') =>
    throttledFailure(throttlesOf(deps.config).account, ctx, header) ?? unauthenticated(message);
  const token = bearerToken(header);
  if (!token) throw refuse();
  const em = deps.orm.em.fork();
  const now = Date.now();
  const windowStart = windowStartOf(now);
  const found = await readToken(em, token, windowStart);
  if (!found) throw refuse();
  // Counted in the grant's window before this check, as a key refused for its surface is: a token
  // presented at the wrong endpoint is the holder's request all the same.
  if (!found.audience.includes(resource))
    throw refuse(`This access token was issued for another MCP endpoint; ask the authorization server for one for ${resource}.`);
  const row = found.person;
  if (row.status !== 'active') throw new HttpError(403, 'This account is suspended.', { reason: 'account_suspended' });
  if (!row.admitted || row.rate_count === null) throw new Error('authentication row admitted inconsistently');
  sweepOldWindows(em, windowStart);
  if (row.user_active) found.admitted?.();
  const principal: OAuthPrincipal = {
    account: contextAccount(row),
    user: { id: row.user_id, active: row.user_active, permissions: row.user_permissions ?? [] },
    grant: {
      grantId: found.grantId,
      clientId: found.clientId,
      scopes: found.scope.split(' ').filter((s) => s !== ''),
      resource,
      expiresAt: found.expiresAt,
    },
  };
  ctx.state.accountId = principal.account.id;
  answerRate(ctx, rateDecision(Number(row.rate_count), deps.config.rateLimitPerMinute, windowStart, now, Number(row.rate_previous)));
  const rc: RequestContext = {
    account: principal.account,
    actor: { kind: 'oauth_client', clientId: found.clientId, issuer: principal.user },
    em,
    log: deps.log.child({ requestId: ctx.state.requestId, account: principal.account.id, ...logFields }),
  };
  return { principal, rc };
}

/** The rate headers of an authenticated request, and its refusal over the limit. */
function answerRate(ctx: Koa.Context, rate: RateDecision): void {
  ctx.set('X-RateLimit-Limit', String(rate.limit));
  ctx.set('X-RateLimit-Remaining', String(rate.remaining));
  if (!rate.allowed) {
    throw new HttpError(429, 'Too Many Attempts.', {
      headers: { 'Retry-After': String(rate.retryAfter), 'X-RateLimit-Reset': String(Math.floor(rate.resetAt / 1000)) },
    });
  }
}

function contextOf(
  ctx: Koa.Context,
  deps: { log: Logger },
  surface: 'rest' | 'mcp',
  em: EntityManager,
  a: Omit<Authenticated, 'rate'>,
  logFields: Record<string, unknown> = {},
): RequestContext {
  return {
    account: a.account,
    actor: { kind: surface === 'rest' ? 'api_key' : 'mcp_credential', key: a.key, issuer: a.user },
    em,
    log: deps.log.child({ requestId: ctx.state.requestId, account: a.account.id, ...logFields }),
  };
}

type CallerDeps = { orm: MikroORM; config: Config; log: Logger };
/** What a route asks of the key's issuer. */
type RoutePermission = { issuerRequired?: boolean; permission?: string };
const authorizerOf = (permission: RoutePermission) => (p: Principal) => {
  if (permission.issuerRequired || permission.permission) authorizeIssuer(p, permission.permission);
};

/**
 * A read (an operation that writes nothing) as the REST caller, started beside its authentication
 * when this process knows the token (api/http/speculation.ts): its answer counts only when the
 * authentication admits the request as the same principal; otherwise it is dropped unseen and the
 * read runs again as the principal just read, or the refusal is answered.
 */
export async function readAsCaller<T>(
  ctx: Koa.Context,
  deps: CallerDeps,
  permission: RoutePermission,
  read: (rc: RequestContext) => Promise<T>,
): Promise<T> {
  const authorize = authorizerOf(permission);
  const early = speculativePrincipal(ctx.get('authorization'));
  let earlyRead: Promise<T> | null = null;
  if (early && allows(authorize, early)) {
    earlyRead = read(contextOf(ctx, deps, 'rest', deps.orm.em.fork(), early));
    // Settled below when it counts; dropped (and its failure with it) when it does not.
    earlyRead.catch(() => {});
  }
  let caller: Awaited<ReturnType<typeof callerOf>>;
  try {
    caller = await callerOf(ctx, deps, 'rest');
    authorize(caller.principal);
  } catch (err) {
    if (earlyRead) earlyReads.inc({ outcome: 'dropped' });
    throw err;
  }
  if (earlyRead && early) {
    const same = samePrincipal(caller.authenticated, early);
    earlyReads.inc({ outcome: same ? 'used' : 'dropped' });
    if (same) return earlyRead;
  }
  return read(caller.rc);
}

/** The door's own: the write's statement found the credential changed (or refused) and counted nothing. */
class NotAdmittedInStatement extends Error {}

/**
 * A request as the REST caller whose authentication its handler's own statement makes
 * (RequestContext.admission): for a token this process admitted before, the handler runs at once as
 * the principal it had then, and the service's one statement counts the request in the key's window
 * and writes only when the key is still admitted as exactly that principal (the database's digest
 * of it) and the request fits the window. One round trip where there were two.
 * Whatever did not end in that admission (a changed or refused credential, which the statement does
 * not count; a refusal found before the statement; a statement that failed and so counted nothing)
 * is decided by the plain authentication, once: its refusal is answered, or the handler's own
 * refusal when the principal is the same, or the handler runs again as the principal just read. The
 * handler must write nothing but through that statement (the operation's `admitsInStatement`).
 */
export async function admittedInStatement<T>(
  ctx: Koa.Context,
  deps: CallerDeps,
  permission: RoutePermission,
  write: (rc: RequestContext) => Promise<T>,
): Promise<T> {
  const authorize = authorizerOf(permission);
  const plain = async () => {
    const caller = await callerOf(ctx, deps, 'rest');
    authorize(caller.principal);
    return caller;
  };
  const header = ctx.get('authorization');
  const early = rememberedPrincipal(header);
  const token = bearerToken(header);
  if (!early || !token || !allows(authorize, early)) return write((await plain()).rc);

  const now = Date.now();
  const windowStart = windowStartOf(now);
  const limit = deps.config.rateLimitPerMinute;
  const em = deps.orm.em.fork();
  let settled = false;
  const admission: Admission = {
    get pending() {
      return !settled;
    },
    sql: () =>
      admissionSql({
        tokenHash: hashToken(token),
        surface: 'rest',
        windowStart,
        fingerprint: early.fingerprint,
        weight: windowWeight(windowStart, now),
        limit,
      }),
    settle(row: AdmissionRow) {
      if (!row.adm_matched) {
        admissionsInStatement.inc({ outcome: 'fallback' });
        throw new NotAdmittedInStatement();
      }
      settled = true;
      if (row.adm_touch_due && row.adm_key_id !== null) touchKeyLastUsed(em, row.adm_key_id);
      sweepOldWindows(em, windowStart);
      const rate = rateDecision(Number(row.adm_count), limit, windowStart, now, Number(row.adm_previous));
      rememberAuthenticated(header, { ...early, rate });
      ctx.state.accountId = early.account.id;
      admissionsInStatement.inc({ outcome: rate.allowed ? 'admitted' : 'refused' });
      answerRate(ctx, rate);
    },
  };
  const rc = contextOf(ctx, deps, 'rest', em, early);
  rc.admission = admission;
  try {
    const result = await write(rc);
    if (settled) return result;
    // The handler ended without its statement: the request is authenticated now, and its answer stands for the same principal only.
    const caller = await plain();
    if (samePrincipal(caller.authenticated, early)) return result;
    return write(caller.rc);
  } catch (err) {
    // Decided after the admission (the write's own refusals, a 429): as it stands.
    if (settled) throw err;
    if (!(err instanceof NotAdmittedInStatement)) admissionsInStatement.inc({ outcome: 'fallback' });
    const caller = await plain();
    if (!(err instanceof NotAdmittedInStatement) && samePrincipal(caller.authenticated, early)) throw err;
    return write(caller.rc);
  }
}

function allows(authorize: (p: Principal) => void, p: Principal): boolean {
  try {
    authorize(p);
    return true;
  } catch {
    return false;
  }
}

/** Per API process (one Config each), the failure throttles of the two doors that take a bearer token. */
const throttles = new WeakMap<Config, { account: AuthFailureThrottle; operator: AuthFailureThrottle }>();
export function throttlesOf(config: Config) {
  let t = throttles.get(config);
  if (!t) {
    t = {
      account: new AuthFailureThrottle(config.authFailuresPerMinute),
      operator: new AuthFailureThrottle(config.operatorFailuresPerMinute),
    };
    throttles.set(config, t);
  }
  return t;
}

/**
 * The 429 a failed authentication gets once its client address (ctx.ip: the socket's, or the one
 * the trusted proxies report, TRUSTED_PROXY_HOPS) or the presented credential's hint has failed too
 * often; null while neither has, and the failure is answered as it is. Asked only after the
 * credential was checked and failed: a credential that checks never meets the throttle.
 */
function throttledFailure(throttle: AuthFailureThrottle, ctx: Koa.Context, header: string | undefined): HttpError | null {
  const token = bearerToken(header);
  const d = throttle.failed({ address: ctx.ip, credential: token === null ? null : tokenHint(token) });
  if (!d) return null;
  return new HttpError(429, 'Too many failed authentication attempts from this address or with this credential.', {
    headers: { 'Retry-After': String(d.retryAfter) },
  });
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * Compares in constant time: both sides are hashed first, so the comparison neither stops at the
 * first differing byte nor depends on the token's length, and timingSafeEqual always gets equal lengths.
 */
export function operatorTokenMatches(header: string | undefined, operatorToken: string): boolean {
  const token = bearerToken(header) ?? '';
  const same = timingSafeEqual(digest(token), digest(operatorToken));
  return same && token.length > 0;
}

/** The operator door: the token compared in constant time, always; a failure throttled per client address and per token hint. */
export function authenticateOperator(ctx: Koa.Context, config: Config): void {
  const header = ctx.get('authorization');
  if (operatorTokenMatches(header, config.operatorToken)) return;
  throw throttledFailure(throttlesOf(config).operator, ctx, header) ?? unauthenticated();
}
