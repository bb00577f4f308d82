import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../entities/db.js';
import { HttpError } from './errors.js';
import type { AccountRow, KeyRow, UserRow } from './context.js';
import { hasPermission } from '../domain/permissions.js';

export const MCP_PREFIX = 'svc_mcp_';

export const hashToken = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

/** A 64-character secret from a 62-letter alphabet (about 381 bits), shown once and stored hashed. */
export function newSecret(length = 64): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const out: string[] = [];
  while (out.length < length) {
    for (const b of crypto.randomBytes(length)) {
      if (b < 248 && out.length < length) out.push(alphabet[b % 62]);
    }
  }
  return out.join('');
}

export interface Principal { account: AccountRow; key: KeyRow; user: UserRow | null }

const unauthenticated = (message = 'Unauthenticated.') => new HttpError(401, message);

/** Reads only the Authorization header: a key in the query string is never looked at. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

export async function authenticate(em: EntityManager, header: string | undefined, surface: 'rest' | 'mcp'): Promise<Principal> {
  const token = bearerToken(header);
  if (!token) throw unauthenticated();
  const looksMcp = token.startsWith(MCP_PREFIX);
  if ((surface === 'rest') === looksMcp) throw unauthenticated('Unauthenticated.');
  const row = await one<Record<string, any>>(em,
    `select k.id as key_id, k.kind, k.name as key_name, k.user_id, k.expires_at, k.revoked_at, k.last_used_at,
            a.id, a.uid, a.name, a.status, a.wallet_balance, a.currency, a.billing_mode, a.created_at,
            u.active as user_active, u.permissions as user_permissions
       from api_keys k join accounts a on a.id = k.account_id left join users u on u.id = k.user_id
      where k.token_hash = ?`, [hashToken(token)]);
  if (!row || row.kind !== surface) throw unauthenticated();
  if (row.revoked_at) throw unauthenticated('API token has been revoked.');
  if (row.expires_at && new Date(row.expires_at).getTime() <= Date.now()) throw unauthenticated('API token has expired.');
  if (row.status !== 'active') throw new HttpError(403, 'This account is suspended.', { reason: 'account_suspended' });
  // last_used_at is informational; write it at most once a minute per key to keep reads cheap.
  if (!row.last_used_at || Date.now() - new Date(row.last_used_at).getTime() > 60_000) {
    void em.execute('update api_keys set last_used_at = now() where id = ?', [row.key_id]).catch(() => {});
  }
  return {
    account: { id: row.id, uid: row.uid, name: row.name, status: row.status, wallet_balance: row.wallet_balance, currency: row.currency, billing_mode: row.billing_mode, created_at: row.created_at },
    key: { id: row.key_id, kind: row.kind, name: row.key_name, user_id: row.user_id, expires_at: row.expires_at, revoked_at: row.revoked_at },
    user: row.user_id ? { id: row.user_id, active: row.user_active, permissions: row.user_permissions ?? [] } : null,
  };
}

/**
 * Endpoint families added since 7 September 2026 act with the current permissions of the person
 * who issued the key; a key with no issuer (older keys) or a deactivated issuer is refused there.
 */
export function authorizeIssuer(p: Principal, permission: string | undefined): void {
  if (!p.user) throw new HttpError(403, 'This API key has no issuing user; create a new key to use this endpoint.', { reason: 'issuer_required' });
  if (!p.user.active) throw new HttpError(403, 'The user who issued this API key is deactivated.', { reason: 'issuer_inactive' });
  if (permission && !hasPermission(p.user.permissions, permission)) {
    throw new HttpError(403, `This action requires the ${permission} permission.`, { reason: 'permission_denied' });
  }
}
