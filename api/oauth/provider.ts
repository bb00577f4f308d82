import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { fetch as undiciFetch } from 'undici';
import type { OperationDeps } from '../operation.js';
import { MCP_SERVERS } from '../operation.js';
import { MCP_SCOPES, parseSubject, resourceUrl, serverOfResource, trimBase, redirectUriProblem } from '../../domain/oauth/index.js';
import { personById } from '../../services/account/index.js';
import { postgresAdapter } from '../../services/oauth/index.js';
import { cookieKeys, signingKeys } from '../../services/oauth/keys.js';
import { checkDestinationText, destinationAgent } from '../../services/platform/destinations.js';
import { messagePage, pageHeaders } from './pages.js';

// The MCP authorization server: oidc-provider (docs/decisions.md, "The MCP authorization server"),
// configured for what the MCP authorization spec and the contract ask and nothing more: the
// authorization code grant with PKCE S256 for public clients, rotated refresh tokens, revocation,
// dynamic client registration and client ID metadata documents, resource indicators naming the MCP
// endpoints, opaque access tokens stored only as hashes (services/oauth/adapter.ts). Sign-in and
// consent are our own pages (api/oauth/interactions.ts); the provider's development pages are off.

/** Where the interaction pages are: the provider sends the browser there, with the interaction's cookie. */
export const INTERACTION_PATH = '/oauth/interaction';

/** The provider's routes, under /oauth (the contract names /oauth/authorize and /oauth/token). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  // Turned off below, but the provider mounts a confirmation route under it: kept inside /oauth.
  end_session: '/oauth/session/end',
} as const;

/** The authorization request parameter that carries the scope the client asked for itself, for the consent page (api/oauth/door.ts sets it). */
export const CLIENT_SCOPE_PARAM = 'mcp_client_scope';

/** What the provider issues lives this long (seconds); access tokens and codes as configured (config.ts). */
export const TTL = {
  refreshToken: 30 * 24 * 3600,
  grant: 180 * 24 * 3600,
  interaction: 30 * 60,
  session: 8 * 3600,
} as const;

/** How long a client id metadata document may take and how large it may be (the provider aborts beyond). */
export const CIMD_MAX_BYTES = 5 * 1024;

/**
 * The consent prompt is shown on every authorization, even when the session already holds a grant
 * for the client: a person sees what each connection gets. The provider's own checks stay (they
 * also ask when a scope was never decided).
 */
function policy() {
  const base = interactionPolicy.base();
  base
    .get('consent')!
    .checks.add(
      new interactionPolicy.Check('consent_every_time', 'every connection is consented to', (ctx) =>
        ctx.oidc.result?.consent ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT,
      ),
    );
  return base;
}

/** CORS for a browser client at the token and revocation endpoints: from an origin of its own redirect URIs. */
function clientBasedCORS(_ctx: KoaContextWithOIDC, origin: string, client: { redirectUris?: readonly string[] }): boolean {
  if (origin === 'null') return false;
  return (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin);
}

export function createProvider(deps: OperationDeps): Provider {
  const { config, orm, log } = deps;
  const issuer = trimBase(config.publicBaseUrl);
  const policyOfDestinations = { allowLoopbackDestinations: config.allowLoopbackDestinations };
  const cimdAgent = destinationAgent(policyOfDestinations, { timeoutMs: 2500 });

  const configuration: Configuration = {
    adapter: postgresAdapter(orm, log),
    clients: [],
    routes: OAUTH_ROUTES,
    jwks: signingKeys(config.oauthSecret),
    cookies: {
      names: { session: 'oauth_session', interaction: 'oauth_interaction', resume: 'oauth_resume' },
      // Secure is forced in production (TLS ends at the proxy; the browser is on https); else set when the request is https.
      long: { httpOnly: true, sameSite: 'lax', ...(config.production ? { secure: true } : {}) },
      short: { httpOnly: true, sameSite: 'lax', ...(config.production ? { secure: true } : {}) },
      keys: cookieKeys(config.oauthSecret),
    },
    enabledJWA: {
      idTokenSigningAlgValues: ['ES256'],
      authorizationSigningAlgValues: ['ES256'],
      introspectionSigningAlgValues: ['ES256'],
      userinfoSigningAlgValues: ['ES256'],
    },
    clientAuthMethods: ['none'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    responseTypes: ['code'],
    extraParams: [CLIENT_SCOPE_PARAM],
    pkce: { required: () => true },
    allowOmittingSingleRegisteredRedirectUri: false,
    clientBasedCORS,
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // A connection outlives the browser session it was made in.
    expiresWithSession: async () => false,
    findAccount: async (_ctx, sub) => {
      const subject = parseSubject(sub);
      if (!subject) return undefined;
      const person = await personById(orm.em.fork(), subject.accountId, subject.userId);
      if (!person || !person.active || person.account_status !== 'active') return undefined;
      return { accountId: sub, claims: async () => ({ sub }) };
    },
    interactions: { url: (_ctx, interaction) => `${INTERACTION_PATH}/${interaction.uid}`, policy: policy() },
    features: {
      devInteractions: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Sender-constrained tokens would need the MCP door to check DPoP proofs; bearer tokens only.
      dPoP: { enabled: false },
      introspection: { enabled: false },
      revocation: {
        enabled: true,
        // RFC 7009: a client revokes its own tokens only; anyone else's is answered 200 and left alone.
        allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId,
      },
      registration: { enabled: true, initialAccessToken: false, issueRegistrationAccessToken: false },
      resourceIndicators: {
        enabled: true,
        // A client that names no resource gets /mcp (every server's tools); the MCP spec has clients name one.
        defaultResource: async () => resourceUrl(issuer, null),
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (serverOfResource(issuer, indicator, MCP_SERVERS) === undefined)
            throw new errors.InvalidTarget(`${indicator} is not an MCP endpoint of this server`);
          return {
            scope: MCP_SCOPES.join(' '),
            audience: indicator,
            accessTokenFormat: 'opaque',
            accessTokenTTL: config.oauthAccessTokenTtlSeconds,
          };
        },
      },
      // Client ID Metadata Documents: a client_id that is an https URL names a JSON document the server fetches.
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async (_ctx: unknown, clientId: string) => !('refused' in checkDestinationText(clientId, policyOfDestinations)),
        allowClient: async (_ctx: unknown, client: { redirectUris?: readonly string[] }) =>
          (client.redirectUris ?? []).length > 0 && (client.redirectUris ?? []).every((u) => redirectUriProblem(u) === null),
        cacheDuration: { min: 60, max: 3600 },
      },
    } as Configuration['features'],
    // Outgoing fetches (client ID metadata documents) go through the service's destination policy:
    // no loopback, private, link-local or metadata addresses, checked again at connect time.
    fetch: ((url: string | URL, options: Record<string, unknown>) =>
      undiciFetch(url, { ...options, dispatcher: cimdAgent } as Parameters<typeof undiciFetch>[1])) as unknown as Configuration['fetch'],
    fetchResponseBodyLimits: { 'client_id metadata document': CIMD_MAX_BYTES },
    ttl: {
      AccessToken: (_ctx, token) => token.resourceServer?.accessTokenTTL ?? config.oauthAccessTokenTtlSeconds,
      AuthorizationCode: config.oauthCodeTtlSeconds,
      RefreshToken: TTL.refreshToken,
      Grant: TTL.grant,
      Interaction: TTL.interaction,
      Session: TTL.session,
      IdToken: config.oauthAccessTokenTtlSeconds,
      ClientCredentials: 600,
      DeviceCode: 600,
      BackchannelAuthenticationRequest: 600,
      PreAuthorizedCode: 600,
    } as Configuration['ttl'],
    // An error the provider cannot send back to the client (an unknown client, a redirect URI it did
    // not register): our page, never a redirect.
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      for (const [name, value] of Object.entries(pageHeaders())) ctx.set(name, value);
      ctx.body = messagePage(
        'This connection cannot go on',
        `${out.error_description ?? out.error} (${out.error}). Go back to the app and connect again.`,
      );
    },
  };

  const provider = new Provider(issuer, configuration);
  // The client address and https, as the API reads them behind the deployment's proxies.
  provider.proxy = config.trustedProxyHops > 0;
  if (config.trustedProxyHops > 0) provider.maxIpsCount = config.trustedProxyHops;
  if (config.production)
    provider.use(async (ctx, next) => {
      ctx.cookies.secure = true;
      await next();
    });
  provider.on('server_error', (_ctx: unknown, err: Error) => log.error({ err }, 'oauth provider error'));
  return provider;
}
