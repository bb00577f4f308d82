import crypto from 'node:crypto';
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
  opts: { scopes?: string[]; decision?: 'approve' | 'deny' } = {},
): Promise<URLSearchParams> {
  let page = await browser.follow(url);
  if (/id="sign-in"/.test(page.text)) {
    const posted = await browser.go(actionOf(page.text, 'sign-in'), {
      form: { csrf: csrfOf(page.text), email: person.email, password: person.password },
    });
    if (!posted.location) throw new Error(`sign-in did not go on: ${posted.status} ${posted.text.slice(0, 500)}`);
    page = await browser.follow(posted.location);
  }
  if (!/id="consent"/.test(page.text)) throw new Error(`no consent page: ${page.status} ${page.location} ${page.text.slice(0, 500)}`);
  const ticked = opts.scopes ?? [...page.text.matchAll(/name="scope" value="([^"]+)" id="[^"]+" checked/g)].map((m) => m[1]);
  const decided = await browser.go(actionOf(page.text, 'consent'), {
    form: { csrf: csrfOf(page.text), decision: opts.decision ?? 'approve', scope: ticked },
  });
  if (!decided.location) throw new Error(`consent did not go on: ${decided.status} ${decided.text.slice(0, 500)}`);
  const back = await browser.follow(decided.location);
  const location = back.location ?? '';
  if (!location.startsWith(REDIRECT))
    throw new Error(`did not return to the client: ${back.status} ${location} ${back.text.slice(0, 300)}`);
  return new URL(location).searchParams;
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

export interface Connected {
  client: string;
  verifier: string;
  tokens: {
    access_token: string;
    refresh_token: string;
    scope: string;
    expires_in: number;
    token_type: string;
  };
}

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
  const client = await clientId(opts.client);
  const { verifier, challenge } = pkce();
  const back = await authorizeThroughPages(
    new Browser(),
    authorizeUrl({ client_id: client, code_challenge: challenge, resource, scope: opts.scope }),
    who,
    {
      scopes: opts.scopes,
    },
  );
  const code = back.get('code');
  if (!code) throw new Error(`no code: ${back.toString()}`);
  const r = await token({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    client_id: client,
    resource,
  });
  if (r.status !== 200) throw new Error(`token request failed: ${r.status} ${r.text}`);
  return { client, verifier, tokens: r.body };
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
