import type Router from '@koa/router';
import type Provider from 'oidc-provider';
import type { OperationDeps } from '../operation.js';
import { mountProvider } from './door.js';
import { mountProtectedResourceMetadata } from './metadata.js';
import { oauthThrottles } from './throttles.js';
import { mountInteractions } from './interactions.js';
import { mountInvites } from './invites.js';

/**
 * The MCP authorization server's paths in the API's router: the provider's endpoints
 * (/oauth/authorize, /oauth/token, /oauth/register, /oauth/revoke, /oauth/jwks and the RFC 8414
 * metadata), the protected-resource metadata of every MCP endpoint, the sign-in and consent pages
 * the provider sends a browser to, and the invitation links' page.
 */
export function mountOAuth(router: Router, deps: OperationDeps, provider: Provider): void {
  const throttles = oauthThrottles(deps.config);
  mountProvider(router, provider, throttles, deps.log);
  mountProtectedResourceMetadata(router, deps.config.publicBaseUrl);
  mountInteractions(router, deps, provider, throttles);
  mountInvites(router, deps);
}
