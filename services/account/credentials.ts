import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, onePlanned } from '../../entities/db.js';
import type { AccountRow } from '../platform/context.js';
import { WINDOW_MS, countInWindowSql, previousWindowSql } from '../platform/rate-windows.js';
import { defaultSmsChannelSql } from '../messaging/index.js';

// The credential lookup of every authenticated request, kept out of the doors (which decide what
// the row means: 401, 403, 429).

/** One row of the authentication statement: the key, its account, its issuer and the request's rate count. */
export interface CredentialRow extends AccountRow {
  key_id: number;
  kind: 'rest' | 'mcp';
  key_name: string;
  user_id: number | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  expired: boolean;
  touch_due: boolean;
  /** Read only when user_id is set (the left join found the issuer). */
  user_active: boolean;
  user_permissions: string[] | null;
  admitted: boolean;
  rate_count: number | string | null;
  rate_previous: number | string;
  sms_channel_id: number | null;
  /** Read only when sms_channel_id is set (the lateral join found a default route). */
  sms_channel_code: string;
  sms_channel_provider: string;
  /** Digest of the principal (PRINCIPAL_SQL): equal digests, the same principal. */
  principal_fp: string;
}

/**
 * The key by its hash with its account, issuer, default SMS channel and `admitted` (right surface,
 * not revoked, not expired, account active), as the CTEs `k` and `p`. `principal_fp` digests
 * everything of the principal a request acts as (key, account, issuer and permissions, default
 * channel): two rows with the same digest name the same principal. Params: surface, token hash.
 */
const PRINCIPAL_SQL = `k as (
       select k.id as key_id, k.kind, k.name as key_name, k.user_id, k.expires_at, k.revoked_at, k.last_used_at,
              (k.expires_at is not null and k.expires_at <= now()) as expired,
              (k.last_used_at is null or k.last_used_at < now() - interval '1 minute') as touch_due,
              a.id, a.uid, a.name, a.status, a.wallet_balance, a.currency, a.billing_mode, a.created_at,
              u.active as user_active, u.permissions as user_permissions,
              (k.kind = ? and k.revoked_at is null and (k.expires_at is null or k.expires_at > now()) and a.status = 'active') as admitted
         from api_keys k join accounts a on a.id = k.account_id left join users u on u.id = k.user_id
        where k.token_hash = ?
     ), p as (
       select k.*, ch.id as sms_channel_id, ch.code as sms_channel_code, ch.provider as sms_channel_provider,
              md5(row(k.key_id, k.kind, k.key_name, k.user_id, k.expires_at, k.revoked_at, k.id, k.uid, k.name, k.status,
                      k.wallet_balance, k.currency, k.billing_mode, k.created_at, k.user_active, k.user_permissions,
                      ch.id, ch.code, ch.provider)::text) as principal_fp
         from k left join lateral (${defaultSmsChannelSql('k.id')}) ch on k.admitted
     )`;

/**
 * One round trip: the key looked up by its hash and, only when it is admitted (right surface, not
 * revoked, not expired, account active), this request counted in its one-minute window, the
 * previous minute's count read (the sliding window) and the account's default SMS channel read.
 * A refused token therefore counts against nobody's window. Expiry is judged by the database clock.
 */
export async function findCredential(
  em: EntityManager,
  q: { tokenHash: string; surface: 'rest' | 'mcp'; windowStart: number },
): Promise<CredentialRow | null> {
  // Every authenticated request runs it: planned once per connection (onePlanned). Its commit does
  // not wait for the WAL flush (docs/security.md, Rate limit): every request of a key updates the
  // key's window row, which a flush would hold locked against the key's next request; a count lost
  // to a database crash is harmless.
  return onePlanned<CredentialRow>(
    em,
    `with ${PRINCIPAL_SQL}, hit as (
       ${countInWindowSql(`'key:' || p.key_id`, 'from p where p.admitted')}
     )
     select p.*, (select count from hit) as rate_count, ${previousWindowSql(`'key:' || p.key_id`)} as rate_previous
       from p
      where set_config('synchronous_commit', 'off', true) is not null`,
    [q.surface, q.tokenHash, q.windowStart, q.windowStart - WINDOW_MS],
  );
}

/**
 * A request's authentication as CTEs of the one statement that also makes its write (the write is
 * conditioned on `ok` having a row). Only a key admitted as exactly the principal `fingerprint`
 * names is counted in its window (so a refused or changed credential is counted by the plain
 * authentication that follows, once); `adm` reports that and the counts, and `ok` has a row when,
 * besides, the request fits the window: `count + previous × weight ≤ limit`, the sum rateDecision
 * makes in JavaScript, in the same float8 arithmetic, so both always agree.
 */
export function admissionSql(q: {
  tokenHash: string;
  surface: 'rest' | 'mcp';
  windowStart: number;
  fingerprint: string;
  weight: number;
  limit: number;
}): { sql: string; params: unknown[] } {
  return {
    sql: `${PRINCIPAL_SQL}, m as (
       select key_id, touch_due from p where p.admitted and p.principal_fp = ?
     ), hit as (
       ${countInWindowSql(`'key:' || m.key_id`, 'from m')}
     ), adm as (
       select exists (select from m) as adm_matched, (select count from hit) as adm_count,
              (select ${previousWindowSql(`'key:' || m.key_id`)} from m) as adm_previous,
              (select touch_due from m) as adm_touch_due, (select key_id from m) as adm_key_id
     ), ok as (
       select from adm where adm_matched and adm_count::float8 + adm_previous::float8 * ?::float8 <= ?::float8
     )`,
    params: [q.surface, q.tokenHash, q.fingerprint, q.windowStart, q.windowStart - WINDOW_MS, q.weight, q.limit],
  };
}

/**
 * last_used_at is informational: written at most once a minute per key, off the request's path and
 * outside the lookup, so that write never holds the key's hot rate-limit row. The guard keeps
 * concurrent requests that all saw a stale value from writing it again.
 */
export function touchKeyLastUsed(em: EntityManager, keyId: number): void {
  void exec(
    em,
    `update api_keys set last_used_at = now() where id = ? and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [keyId],
  ).catch(() => {});
}
