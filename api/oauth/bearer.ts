import type Provider from 'oidc-provider';
import type { AccessTokenView } from '../http/auth.js';

// How the MCP door reads an OAuth access token: opaque tokens, looked up through the provider's own
// model (its adapter finds them by hash, services/oauth/adapter.ts), so expiry, revocation and a
// grant revoked for reuse all take effect on the next request.

/** Opaque access tokens are 43 characters of base64url (256 random bits); anything else is not one of ours. */
const ACCESS_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function accessTokenFinder(provider: Provider): (token: string) => Promise<AccessTokenView | null> {
  return async (token) => {
    if (!ACCESS_TOKEN.test(token)) return null;
    const at = await provider.AccessToken.find(token);
    if (!at?.accountId || !at.grantId || !at.clientId || at.isExpired) return null;
    const audience = at.aud === undefined ? [] : ([] as string[]).concat(at.aud);
    return {
      subject: at.accountId,
      clientId: at.clientId,
      grantId: at.grantId,
      scope: at.scope ?? '',
      audience,
      expiresAt: at.exp ?? 0,
    };
  };
}
