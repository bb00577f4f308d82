import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { AccessTokenReader } from '../http/auth.js';
import { hashToken } from '../../services/platform/secrets.js';
import { findAccessTokenHolder, touchGrantLastUsed } from '../../services/oauth/index.js';

// How the MCP door reads an OAuth access token: opaque tokens, stored by the authorization server
// (oidc-provider, through services/oauth/adapter.ts) only as their hash. The door reads the record
// itself rather than through the provider's model, in the statement that also reads the person and
// counts the request (one round trip, as a REST key's): the record is gone once the token, or its
// grant, is revoked, and has an expiry, so both take effect on the next request.

/** Opaque access tokens are 43 characters of base64url (256 random bits); anything else is not one of ours. */
const ACCESS_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** How often a grant's last use is written at most (the statement also guards it, across processes). */
const TOUCH_EVERY_MS = 60_000;
/** Grants this process recorded a use of, and when: most requests then send no statement at all. */
const MAX_REMEMBERED = 10_000;

export function accessTokenReader(orm: MikroORM): AccessTokenReader {
  const touched = new Map<string, number>();
  const touch = (grantId: string) => {
    const now = Date.now();
    if (now - (touched.get(grantId) ?? 0) < TOUCH_EVERY_MS) return;
    if (touched.size >= MAX_REMEMBERED) touched.clear();
    touched.set(grantId, now);
    touchGrantLastUsed(orm.em.fork(), grantId);
  };
  return async (em: EntityManager, token: string, windowStart: number) => {
    if (!ACCESS_TOKEN.test(token)) return null;
    const row = await findAccessTokenHolder(em, { tokenHash: hashToken(token), windowStart });
    if (!row) return null;
    return {
      person: row,
      grantId: row.grant_id,
      clientId: row.client_id,
      scope: row.scope ?? '',
      audience: row.aud === null ? [] : ([] as string[]).concat(row.aud),
      expiresAt: Number(row.exp ?? 0),
      // The connection's last use, for the operator's list: only once the door admitted the request.
      admitted: () => touch(row.grant_id),
    };
  };
}
