// The protected resources of the authorization server: /mcp and each /mcp/v1/<server>, each its
// own resource (RFC 8707 resource indicator, RFC 9728 metadata). A token is bound to the one it was
// issued for: its audience is that URL exactly.

/** The base URL without a trailing slash (PUBLIC_BASE_URL may be written either way). */
export const trimBase = (base: string) => base.replace(/\/+$/, '');

/** The path of an MCP endpoint: /mcp for every server's tools, /mcp/v1/<key> for one. */
export const mcpPath = (server: string | null) => (server === null ? '/mcp' : `/mcp/v1/${server}`);

/** The resource indicator (and token audience) of an MCP endpoint. */
export const resourceUrl = (base: string, server: string | null) => `${trimBase(base)}${mcpPath(server)}`;

export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** Where an endpoint's protected-resource metadata is (RFC 9728 section 3.1: the well-known path inserted before the resource's path). */
export const resourceMetadataUrl = (base: string, server: string | null) =>
  `${trimBase(base)}${PROTECTED_RESOURCE_WELL_KNOWN}${mcpPath(server)}`;

/**
 * The MCP endpoint a resource indicator names, compared as text (no normalisation: the indicator
 * must be the URL the metadata gives, exactly); undefined when it names none of them. `servers` are
 * the contract's server keys.
 */
export function serverOfResource(base: string, indicator: string, servers: readonly string[]): string | null | undefined {
  const root = trimBase(base);
  if (indicator === `${root}/mcp`) return null;
  const prefix = `${root}/mcp/v1/`;
  if (!indicator.startsWith(prefix)) return undefined;
  const key = indicator.slice(prefix.length);
  return servers.includes(key) ? key : undefined;
}

/**
 * The subject (oidc-provider's accountId, the token's `sub`) of a person: the account and the user,
 * so a token names its tenant without a lookup. `<account id>.<user id>`.
 */
export const subjectOf = (accountId: number, userId: number) => `${accountId}.${userId}`;

export function parseSubject(sub: string | undefined | null): { accountId: number; userId: number } | null {
  const m = /^([1-9][0-9]{0,9})\.([1-9][0-9]{0,9})$/.exec(sub ?? '');
  if (!m) return null;
  const accountId = Number(m[1]);
  const userId = Number(m[2]);
  return accountId <= 2 ** 31 - 1 && userId <= 2 ** 31 - 1 ? { accountId, userId } : null;
}
