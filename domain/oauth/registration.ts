// What a dynamic client registration (RFC 7591) may say, checked before the provider reads it:
// registration takes no credential, so its size and shape are bounded here, and the fields that
// would make the server fetch a URL or hold a shared secret are refused or replaced.

import { isMcpScope, scopeWords } from './scopes.js';

export const REGISTRATION_LIMITS = {
  /** The whole request body. */
  bodyBytes: 8 * 1024,
  /** Nesting of the JSON document (client metadata is flat but for arrays of strings). */
  depth: 4,
  keys: 40,
  redirectUris: 10,
  uriLength: 2000,
  clientName: 200,
  scope: 2000,
  contacts: 5,
  contactLength: 254,
} as const;

export type RegistrationError = 'invalid_client_metadata' | 'invalid_redirect_uri';
export interface RegistrationRefusal {
  error: RegistrationError;
  description: string;
}

/** Fields whose value is a URL the client owns (shown or linked, never fetched by us). */
const LINK_FIELDS = ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri'] as const;
/**
 * Refused outright: each makes the server fetch a URL the client names (a server-side request into
 * wherever it points), or belongs to a feature this server does not offer.
 */
const REFUSED_FIELDS = [
  'jwks_uri',
  'jwks',
  'sector_identifier_uri',
  'request_uris',
  'software_statement',
  'initiate_login_uri',
  'backchannel_logout_uri',
  'frontchannel_logout_uri',
  'post_logout_redirect_uris',
] as const;
const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);
/** OpenID words a client may also name in its scope (they grant nothing of the business). */
const OPENID_WORDS = new Set(['openid', 'offline_access']);
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Why a redirect URI cannot be registered, or null. The provider checks the rest (a web client's
 * URI is http or https, a native client's http one is loopback, no fragment); this adds the MCP
 * authorization spec's rule that a redirect is HTTPS or the person's own machine, and bounds.
 */
export function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || uri === '') return 'must be a non-empty string';
  if (uri.length > REGISTRATION_LIMITS.uriLength) return `must be at most ${REGISTRATION_LIMITS.uriLength} characters`;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'must be an absolute URI';
  }
  if (url.hash || uri.includes('#')) return 'must not contain a fragment';
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'http:' && !LOOPBACK_HOSTS.has(url.hostname)) return 'must use https unless it points to the loopback interface';
  if (['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:'].includes(url.protocol))
    return `must not use the ${url.protocol} scheme`;
  return null;
}

const isString = (v: unknown): v is string => typeof v === 'string';

/**
 * The registration request read against the limits: the metadata to hand the provider, or the
 * refusal (RFC 7591 section 3.2.2 error codes). The client authentication method is replaced by
 * `none` (RFC 7591 section 2 lets the server replace requested values): every client here is a
 * public client proving possession with PKCE, and no client secret is ever stored.
 */
export function checkRegistration(body: unknown): { metadata: Record<string, unknown> } | { refused: RegistrationRefusal } {
  const refuse = (description: string, error: RegistrationError = 'invalid_client_metadata') => ({ refused: { error, description } });
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return refuse('The registration request must be a JSON object.');
  const input = body as Record<string, unknown>;
  const keys = Object.keys(input);
  if (keys.length > REGISTRATION_LIMITS.keys)
    return refuse(`The registration request may hold at most ${REGISTRATION_LIMITS.keys} fields.`);
  for (const field of REFUSED_FIELDS) if (field in input) return refuse(`${field} is not supported by this server.`);

  const redirects = input.redirect_uris;
  if (!Array.isArray(redirects) || redirects.length === 0)
    return refuse('redirect_uris must be a non-empty array.', 'invalid_redirect_uri');
  if (redirects.length > REGISTRATION_LIMITS.redirectUris)
    return refuse(`redirect_uris may hold at most ${REGISTRATION_LIMITS.redirectUris} URIs.`, 'invalid_redirect_uri');
  for (const [i, uri] of redirects.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) return refuse(`redirect_uris[${i}] ${problem}.`, 'invalid_redirect_uri');
  }

  if ('client_name' in input && (!isString(input.client_name) || input.client_name.length > REGISTRATION_LIMITS.clientName))
    return refuse(`client_name must be a string of at most ${REGISTRATION_LIMITS.clientName} characters.`);
  for (const field of LINK_FIELDS) {
    const v = input[field];
    if (v === undefined) continue;
    if (!isString(v) || v.length > REGISTRATION_LIMITS.uriLength || !/^https:\/\//i.test(v))
      return refuse(`${field} must be an https URL of at most ${REGISTRATION_LIMITS.uriLength} characters.`);
  }
  if ('scope' in input && (!isString(input.scope) || input.scope.length > REGISTRATION_LIMITS.scope))
    return refuse(`scope must be a string of at most ${REGISTRATION_LIMITS.scope} characters.`);
  const unknownScope = isString(input.scope) ? scopeWords(input.scope).find((w) => !isMcpScope(w) && !OPENID_WORDS.has(w)) : undefined;
  if (unknownScope !== undefined) return refuse(`scope names ${unknownScope.slice(0, 100)}, which this server does not offer.`);
  if ('contacts' in input) {
    const c = input.contacts;
    if (
      !Array.isArray(c) ||
      c.length > REGISTRATION_LIMITS.contacts ||
      !c.every((x) => isString(x) && x.length <= REGISTRATION_LIMITS.contactLength)
    )
      return refuse(`contacts must be at most ${REGISTRATION_LIMITS.contacts} email addresses.`);
  }
  if ('grant_types' in input) {
    const g = input.grant_types;
    if (!Array.isArray(g) || !g.every((x) => isString(x) && GRANT_TYPES.has(x)))
      return refuse('grant_types may only name authorization_code and refresh_token.');
  }
  if ('response_types' in input) {
    const r = input.response_types;
    if (!Array.isArray(r) || !r.every((x) => x === 'code')) return refuse('response_types may only name code.');
  }
  if ('application_type' in input && input.application_type !== 'web' && input.application_type !== 'native')
    return refuse('application_type must be web or native.');
  for (const [k, v] of Object.entries(input)) {
    if (isString(v) && v.length > REGISTRATION_LIMITS.uriLength) return refuse(`${k} is too long.`);
  }

  const metadata: Record<string, unknown> = { ...input, token_endpoint_auth_method: 'none' };
  delete metadata.client_secret;
  delete metadata.client_secret_expires_at;
  // A registered scope bounds nothing here: the person's ticks on the consent page are the grant.
  // MCP clients register the protected-resource metadata's scopes_supported (the SDK does), which
  // the provider would refuse as scopes it does not know (it knows only its OpenID words), so the
  // field is checked above and not registered (RFC 7591 section 2 lets the server ignore it).
  delete metadata.scope;
  // Refresh tokens unless the client asked for codes alone.
  if (!('grant_types' in input)) metadata.grant_types = ['authorization_code', 'refresh_token'];
  return { metadata };
}
