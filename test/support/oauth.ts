import crypto from 'node:crypto';
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { API_URL, http } from './stack.js';

// An OAuth client of the authorization server on the API, as an MCP client drives it: registration,
// PKCE, the authorization request, a browser's cookies through the sign-in and consent pages (forms
// posted as a browser would, the CSRF field read from the page), the token endpoint.

export const REDIRECT = 'http://127.0.0.1:9/callback';

export const resourceOf = (server: string | null = null, base = API_URL) => `${base}${server === null ? '/mcp' : `/mcp/v1/${server}`}`;

export function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(body: Record<string, unknown> = {}, base = API_URL) {
  return http('POST', `${base}/oauth/register`, {
    body: { client_name: 'Test Assistant', redirect_uris: [REDIRECT], ...body },
  });
}

/** A registered client's id (201 asserted by the caller through `register` when it matters). */
export async function clientId(body: Record<string, unknown> = {}, base = API_URL): Promise<string> {
  const r = await register(body, base);
  if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${r.text}`);
  return r.body.client_id as string;
}

export interface AuthorizeParams {
  client_id: string;
  code_challenge?: string;
  code_challenge_method?: string;
  redirect_uri?: string;
  resource?: string;
  scope?: string;
  state?: string;
  response_type?: string;
  [extra: string]: string | undefined;
}

export function authorizeUrl(p: AuthorizeParams, base = API_URL): string {
  const q = new URLSearchParams();
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    redirect_uri: REDIRECT,
    state: 'st-1',
    code_challenge_method: 'S256',
    ...p,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) q.set(k, v);
  return `${base}/oauth/authorize?${q.toString()}`;
}

/** A browser without a screen: a cookie jar, no redirect followed by itself. */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(readonly base = API_URL) {}

  async go(url: string, init: { method?: string; form?: Record<string, string | string[]>; headers?: Record<string, string> } = {}) {
    const headers: Record<string, string> = { ...init.headers };
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      const f = new URLSearchParams();
      for (const [k, v] of Object.entries(init.form)) for (const one of ([] as string[]).concat(v)) f.append(k, one);
      body = f.toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const target = url.startsWith('http') ? url : `${this.base}${url}`;
    const res = await fetch(target, { method: init.method ?? (init.form ? 'POST' : 'GET'), headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const expired = attrs.some((a) => /expires=Thu, 01 Jan 1970/i.test(a)) || pair.slice(i + 1) === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair.slice(i + 1));
    }
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') };
  }

  /** Follows redirects inside this server until a page answers or the client's redirect URI is reached. */
  async follow(url: string, stopAt = REDIRECT) {
    let r = await this.go(url);
    for (let hops = 0; r.location && !r.location.startsWith(stopAt) && hops < 10; hops++) r = await this.go(r.location);
    return r;
  }
}

/** The hidden CSRF field of a page's form. */
export const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
/** A form's action on a page. */
export const actionOf = (html: string, id: string) => new RegExp(`action="([^"]+)" (?:class="[^"]*" )?id="${id}"`).exec(html)?.[1] ?? '';

export interface Person {
  email: string;
  password: string;
}

/**
 * Signs in and consents in the browser: from the authorization request to the client's redirect,
 * ticking `scopes` (undefined: the page's own ticks). Answers the redirect's parameters.
 */
export async function authorizeThroughPages(
  browser: Browser,
  url: string,
  person: Person,
  opts: { scopes?: string[]; decision?: 'approve' | 'deny'; redirect?: string } = {},
): Promise<URLSearchParams> {
  return new URL(await authorizedRedirect(browser, url, person, opts)).searchParams;
}

/** As authorizeThroughPages, answering the whole URL the browser is sent back to (`redirect`: the client's redirect URI). */
export async function authorizedRedirect(
  browser: Browser,
  url: string,
  person: Person,
  opts: { scopes?: string[]; decision?: 'approve' | 'deny'; redirect?: string } = {},
): Promise<string> {
  const redirect = opts.redirect ?? REDIRECT;
  let page = await browser.follow(url, redirect);
  if (/id="sign-in"/.test(page.text)) {
    const posted = await browser.go(actionOf(page.text, 'sign-in'), {
      form: { csrf: csrfOf(page.text), email: person.email, password: person.password },
    });
    if (!posted.location) throw new Error(`sign-in did not go on: ${posted.status} ${posted.text.slice(0, 500)}`);
    page = await browser.follow(posted.location, redirect);
  }
  if (!/id="consent"/.test(page.text)) throw new Error(`no consent page: ${page.status} ${page.location} ${page.text.slice(0, 500)}`);
  const ticked = opts.scopes ?? [...page.text.matchAll(/name="scope" value="([^"]+)" id="[^"]+" checked/g)].map((m) => m[1]);
  const decided = await browser.go(actionOf(page.text, 'consent'), {
    form: { csrf: csrfOf(page.text), decision: opts.decision ?? 'approve', scope: ticked },
  });
  if (!decided.location) throw new Error(`consent did not go on: ${decided.status} ${decided.text.slice(0, 500)}`);
  const back = await browser.follow(decided.location, redirect);
  const location = back.location ?? '';
  if (!location.startsWith(redirect))
    throw new Error(`did not return to the client: ${back.status} ${location} ${back.text.slice(0, 300)}`);
  return location;
}

export async function token(form: Record<string, string>, base = API_URL) {
  return http('POST', `${base}/oauth/token`, {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

export async function revoke(form: Record<string, string>, base = API_URL) {
  return http('POST', `${base}/oauth/revoke`, {
    raw: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
}

/** One raw JSON-RPC request at an MCP endpoint with a bearer (2025-era, no session: the endpoint is stateless). */
export function mcpRpc(endpoint: string, bearer: string | null, method: string, params: Record<string, unknown>, base = API_URL) {
  return http('POST', `${base}${endpoint}`, {
    token: bearer,
    raw: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  });
}

/** One raw JSON-RPC initialize at an MCP endpoint with a bearer. */
export function mcpInitialize(endpoint: string, bearer: string | null, base = API_URL) {
  return mcpRpc(
    endpoint,
    bearer,
    'initialize',
    { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    base,
  );
}

// Shared steps of the tests that drive the flow by hand (oauth-flow, oauth-attacks, oauth-clients).

/** A client and a code for `who` at `resource`, the exchange left to the caller. */
export interface Code {
  client: string;
  verifier: string;
  code: string;
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  scope: string;
  expires_in: number;
  token_type: string;
}

export interface Connected {
  client: string;
  verifier: string;
  tokens: Tokens;
}

/** A registered client and a code for `who` through the pages (`scopes`: the ticks; undefined: the page's own). */
export async function codeFor(
  who: Person,
  resource: string,
  opts: { scopes?: string[]; scope?: string; client?: string; base?: string } = {},
): Promise<Code> {
  const base = opts.base ?? API_URL;
  const client = opts.client ?? (await clientId({}, base));
  const { verifier, challenge } = pkce();
  const back = await authorizeThroughPages(
    new Browser(base),
    authorizeUrl({ client_id: client, code_challenge: challenge, resource, scope: opts.scope }, base),
    who,
    { scopes: opts.scopes },
  );
  const code = back.get('code');
  if (!code) throw new Error(`no code: ${back.toString()}`);
  return { client, verifier, code };
}

/** The authorization-code grant for a code, as its client sends it (`over` changes or drops fields). */
export function exchange(c: Code, resource: string, over: Record<string, string | undefined> = {}, base = API_URL) {
  const form: Record<string, string | undefined> = {
    grant_type: 'authorization_code',
    code: c.code,
    code_verifier: c.verifier,
    redirect_uri: REDIRECT,
    client_id: c.client,
    resource,
    ...over,
  };
  return token(Object.fromEntries(Object.entries(form).filter((e): e is [string, string] => e[1] !== undefined)), base);
}

/** The refresh-token grant (`over` adds or changes fields). */
export const refresh = (client: string, refreshToken: string, over: Record<string, string> = {}, base = API_URL) =>
  token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: client, ...over }, base);

/**
 * A client registered and connected for `who` to `resource` through the pages, its code exchanged:
 * the tokens an assistant holds. `scopes` are the ticks (undefined: the page's own); `scope` what
 * the client asks for; `client` the registration's extra metadata (its name).
 */
export async function connect(
  who: Person,
  resource = resourceOf('contacts'),
  opts: { scopes?: string[]; scope?: string; client?: Record<string, unknown> } = {},
): Promise<Connected> {
  const c = await codeFor(who, resource, {
    scopes: opts.scopes,
    scope: opts.scope,
    client: opts.client ? await clientId(opts.client) : undefined,
  });
  const r = await exchange(c, resource);
  if (r.status !== 200) throw new Error(`token exchange failed: ${r.status} ${r.text}`);
  return { client: c.client, verifier: c.verifier, tokens: r.body };
}

/** Signs in on the page an authorization request opens and answers the page that follows it (consent, or the account chooser). */
export async function signedIn(browser: Browser, url: string, who: Person) {
  const page = await browser.follow(url);
  const signed = await browser.go(actionOf(page.text, 'sign-in'), {
    form: { csrf: csrfOf(page.text), email: who.email, password: who.password },
  });
  return signed.location ? browser.follow(signed.location) : signed;
}

/**
 * The SDK's OAuth client provider (the interface an MCP host implements), kept in memory: DCR as a
 * public native client returning to REDIRECT; `authorizationUrl` is where the SDK sent the person.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | null = null;
  client: StoredOAuthClientInformation | undefined;
  saved: StoredOAuthTokens | undefined;
  private verifier = '';
  private discovery: OAuthDiscoveryState | undefined;

  constructor(readonly name = 'SDK Assistant') {}

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' };
  }
  state() {
    return crypto.randomBytes(8).toString('hex');
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
  /** What the SDK discards when the server says a credential is gone (invalid_grant: the tokens). */
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
    if (scope === 'all' || scope === 'discovery') this.discovery = undefined;
  }
}
