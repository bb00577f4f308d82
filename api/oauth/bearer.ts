import type Provider from 'oidc-provider';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { AccessTokenView } from '../http/auth.js';
import { touchGrantLastUsed } from '../../services/oauth/index.js';

// How the MCP door reads an OAuth access token: opaque tokens, looked up through the provider's own
// model (its adapter finds them by hash, services/oauth/adapter.ts), so expiry, revocation and a
// grant revoked for reuse all take effect on the next request.

/** Opaque access tokens are 43 characters of base64url (256 random bits); anything else is not one of ours. */
const ACCESS_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** How often a grant's last use is written at most (the statement also guards it, across processes). */
const TOUCH_EVERY_MS = 60_000;
/** Grants this process recorded a use of, and when: most requests then send no statement at all. */
const MAX_REMEMBERED = 10_000;

export function accessTokenFinder(provider: Provider, orm: MikroORM): (token: string) => Promise<AccessTokenView | null> {
  const touched = new Map<string, number>();
  const touch = (grantId: string) => {
    const now = Date.now();
    if (now - (touched.get(grantId) ?? 0) < TOUCH_EVERY_MS) return;
    if (touched.size >= MAX_REMEMBERED) touched.clear();
    touched.set(grantId, now);
    touchGrantLastUsed(orm.em.fork(), grantId);
  };
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
      // The connection's last use, for the operator's list: only once the door admitted the request.
      admitted: () => touch(at.grantId!),
    };
  };
}
