import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tablesOf, type Row } from '../../entities/database.js';
import { exec, many, one, onePlanned } from '../../entities/db.js';
import { PERSON_CREDENTIAL_COLUMNS, PERSON_CREDENTIAL_SQL, personCredentialParams, type PersonCredentialRow } from '../account/index.js';

// The oauth family's statements: the only code that names oauth_records, user_passwords and
// user_invites. Ids arrive here hashed (adapter.ts, passwords.ts); nothing here sees a token.

const db = (em: EntityManager) => tablesOf(em, 'oauth');

export type OAuthRecordRow = Row<'oauth', 'oauth_records'>;

/** What a stored object is filed under besides its payload. */
export interface RecordKeys {
  model: string;
  idHash: string;
  grantId: string | null;
  uidHash: string | null;
  clientId: string | null;
  accountId: number | null;
  userId: number | null;
  /** Seconds from now; null for objects that do not expire (registered clients). */
  expiresIn: number | null;
}

/** Writes an object, replacing the one stored under the same kind and id (the provider saves a session or a grant again as it changes). */
export async function upsertRecord(em: EntityManager, k: RecordKeys, payload: Record<string, unknown>): Promise<void> {
  await exec(
    em,
    `insert into oauth_records (model, id_hash, payload, grant_id, uid_hash, client_id, account_id, user_id, expires_at, created_at, updated_at)
     values (?, ?, ?::jsonb, ?, ?, ?, ?, ?, case when ?::int is null then null else now() + make_interval(secs => ?::int) end, now(), now())
     on conflict (model, id_hash) do update
        set payload = excluded.payload, grant_id = excluded.grant_id, uid_hash = excluded.uid_hash, client_id = excluded.client_id,
            account_id = excluded.account_id, user_id = excluded.user_id, expires_at = excluded.expires_at, updated_at = now()`,
    [k.model, k.idHash, JSON.stringify(payload), k.grantId, k.uidHash, k.clientId, k.accountId, k.userId, k.expiresIn, k.expiresIn],
  );
}

export type FoundRecord = Pick<OAuthRecordRow, 'payload' | 'consumed_at'>;

/** An object that has not expired, by kind and hashed id (expiry by the database clock). */
export async function findRecord(em: EntityManager, model: string, idHash: string): Promise<FoundRecord | null> {
  return (
    (await db(em)
      .selectFrom('oauth_records')
      .select(['payload', 'consumed_at'])
      .where('model', '=', model)
      .where('id_hash', '=', idHash)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<string>`now()`)]))
      .executeTakeFirst()) ?? null
  );
}

/** A session by its hashed uid. */
export async function findRecordByUid(em: EntityManager, model: string, uidHash: string): Promise<FoundRecord | null> {
  return (
    (await db(em)
      .selectFrom('oauth_records')
      .select(['payload', 'consumed_at'])
      .where('model', '=', model)
      .where('uid_hash', '=', uidHash)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<string>`now()`)]))
      .executeTakeFirst()) ?? null
  );
}

/**
 * Marks a code or refresh token used, only if it was not: one statement, so of two requests racing
 * with the same one exactly one gets `consumed: true`. `grantId` is the grant it belongs to.
 */
export async function consumeRecord(
  em: EntityManager,
  model: string,
  idHash: string,
): Promise<{ consumed: boolean; grantId: string | null }> {
  const row = await one<{ grant_id: string | null }>(
    em,
    `update oauth_records set consumed_at = now(), updated_at = now()
      where model = ? and id_hash = ? and consumed_at is null
     returning grant_id`,
    [model, idHash],
  );
  if (row) return { consumed: true, grantId: row.grant_id };
  // Used already (by a request racing this one): the grant it belongs to, for the caller to revoke.
  const used = await db(em)
    .selectFrom('oauth_records')
    .select('grant_id')
    .where('model', '=', model)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  return { consumed: false, grantId: used?.grant_id ?? null };
}

export async function destroyRecord(em: EntityManager, model: string, idHash: string): Promise<void> {
  await db(em).deleteFrom('oauth_records').where('model', '=', model).where('id_hash', '=', idHash).execute();
}

/**
 * What was issued under a grant: the objects of one kind (the provider revokes kind by kind), or,
 * without `model`, everything, the grant included (a used code or refresh token presented again).
 */
export async function destroyGrantRecords(em: EntityManager, grantId: string, model?: string): Promise<number> {
  let q = db(em).deleteFrom('oauth_records').where('grant_id', '=', grantId);
  if (model !== undefined) q = q.where('model', '=', model);
  return Number((await q.executeTakeFirst()).numDeletedRows);
}

// Connections (an operator's list of an account's OAuth grants)

/**
 * A grant's last use: written when one of its access tokens opens an MCP endpoint, at most once a
 * minute, off the request's path (nobody waits for it, and a failure only leaves it older).
 */
/** An access token's grant beside the person it names (PersonCredentialRow), as the MCP door admits a request with it. */
export type AccessTokenHolderRow = PersonCredentialRow & {
  grant_id: string;
  client_id: string;
  scope: string | null;
  /** The token's audience as the provider stored it: one resource URL or a list of them. */
  aud: string | string[] | null;
  /** Seconds since the epoch. */
  exp: string | number | null;
};

/**
 * The MCP door's OAuth bearer as one round trip: the unexpired access token by its hash (the
 * provider's own record, services/oauth/adapter.ts), the person it names with their account, and
 * the request counted in the grant's window (the account family's PERSON_CREDENTIAL_SQL). A token
 * revoked, or of a grant revoked (for a reused code or refresh token, or by the operator), has no
 * record any more, so it finds nothing on the next request. Planned once per connection, and its
 * commit does not wait for the WAL flush, as the key's statement (docs/security.md, Rate limit).
 */
export function findAccessTokenHolder(em: EntityManager, q: { tokenHash: string; windowStart: number }) {
  return onePlanned<AccessTokenHolderRow>(
    em,
    `with t as (
       select r.account_id, r.user_id, 'grant:' || r.grant_id as bucket, r.grant_id, r.client_id,
              r.payload->>'scope' as scope, r.payload->'aud' as aud, r.payload->>'exp' as exp
         from oauth_records r
        where r.model = 'AccessToken' and r.id_hash = ? and r.expires_at > now()
          and r.grant_id is not null and r.client_id is not null and r.account_id is not null and r.user_id is not null
     ), ${PERSON_CREDENTIAL_SQL}
     select ${PERSON_CREDENTIAL_COLUMNS}, t.grant_id, t.client_id, t.scope, t.aud, t.exp
       from p cross join t
      where set_config('synchronous_commit', 'off', true) is not null`,
    [q.tokenHash, ...personCredentialParams(q.windowStart)],
  );
}

export function touchGrantLastUsed(em: EntityManager, grantId: string): void {
  void exec(
    em,
    `update oauth_records set last_used_at = now()
      where model = 'Grant' and grant_id = ? and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
    [grantId],
  ).catch(() => {});
}

/** An account's grant as the operator's list shows it. */
export interface GrantRow {
  grant_id: string;
  client_id: string | null;
  /** The registered client's name; null for a client that registered none, or one known by its metadata document. */
  client_name: string | null;
  user_id: number | null;
  payload: Record<string, unknown>;
  created_at: string;
  last_used_at: string | null;
  /** The latest expiry of its live access and refresh tokens: how long the connection can go on without the person. */
  expires_at: string;
}

/**
 * An account's live OAuth connections (one grant, `grantId` given, or all, newest first): grants
 * with an access or refresh token that is neither expired nor used. A grant with none left can
 * open nothing (a new consent makes a new grant), so it is no connection.
 */
export async function grantsOfAccount(em: EntityManager, accountId: number, grantId?: string): Promise<GrantRow[]> {
  return many<GrantRow>(
    em,
    `select g.grant_id, g.client_id, c.payload->>'client_name' as client_name, g.user_id, g.payload,
            g.created_at, g.last_used_at, t.expires_at
       from oauth_records g
       join lateral (
         select max(x.expires_at) as expires_at from oauth_records x
          where x.grant_id = g.grant_id and x.model in ('AccessToken', 'RefreshToken')
            and x.consumed_at is null and x.expires_at > now()
       ) t on t.expires_at is not null
       left join oauth_records c on c.model = 'Client' and c.id_hash = encode(sha256(convert_to(g.client_id, 'UTF8')), 'hex')
      where g.model = 'Grant' and g.account_id = ? and (g.expires_at is null or g.expires_at > now())
        and (?::varchar is null or g.grant_id = ?::varchar)
      order by g.created_at desc, g.grant_id`,
    [accountId, grantId ?? null, grantId ?? null],
  );
}

/** Everything issued under an account's grant, the grant included; 0 when the account has no such grant. */
export async function destroyAccountGrant(em: EntityManager, accountId: number, grantId: string): Promise<number> {
  return exec(
    em,
    `delete from oauth_records
      where grant_id = ? and exists (select from oauth_records g where g.model = 'Grant' and g.grant_id = ? and g.account_id = ?)`,
    [grantId, grantId, accountId],
  );
}

/** Drops objects expired more than an hour ago, a bounded batch at a time (the lookups already ignore them). */
export async function dropExpiredRecords(em: EntityManager, batch = 500): Promise<number> {
  return exec(
    em,
    `delete from oauth_records where ctid in (
       select ctid from oauth_records where expires_at < now() - interval '1 hour' limit ?)`,
    [batch],
  );
}

// Passwords

export async function passwordHashesOf(em: EntityManager, userIds: readonly number[]): Promise<Map<number, string>> {
  if (!userIds.length) return new Map();
  const rows = await db(em)
    .selectFrom('user_passwords')
    .select(['user_id', 'password_hash'])
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Map(rows.map((r) => [Number(r.user_id), r.password_hash]));
}

export async function savePasswordHash(em: EntityManager, accountId: number, userId: number, hash: string): Promise<void> {
  await exec(
    em,
    `insert into user_passwords (user_id, account_id, password_hash, created_at, updated_at) values (?, ?, ?, now(), now())
     on conflict (user_id) do update set password_hash = excluded.password_hash, account_id = excluded.account_id, updated_at = now()`,
    [userId, accountId, hash],
  );
}

/** When the user's password was last set; null when it never was. */
export async function passwordSetAt(em: EntityManager, userId: number): Promise<string | null> {
  return (
    (await db(em).selectFrom('user_passwords').select('updated_at').where('user_id', '=', userId).executeTakeFirst())?.updated_at ?? null
  );
}

// Invitations

/** A new invitation for the user; the user's earlier unused ones stop working (one live link per person). */
export async function insertInvite(
  em: EntityManager,
  v: { accountId: number; userId: number; tokenHash: string; expiresInSeconds: number },
) {
  await db(em)
    .updateTable('user_invites')
    .set({ used_at: sql`now()` })
    .where('user_id', '=', v.userId)
    .where('used_at', 'is', null)
    .execute();
  return db(em)
    .insertInto('user_invites')
    .values({
      account_id: v.accountId,
      user_id: v.userId,
      token_hash: v.tokenHash,
      expires_at: sql`now() + make_interval(secs => ${v.expiresInSeconds})`,
      created_at: sql`now()`,
    })
    .returning(['id', 'account_id', 'user_id', 'expires_at', 'created_at'])
    .executeTakeFirstOrThrow();
}

/** A live invitation (unused, not expired) by its hash. */
export async function liveInvite(em: EntityManager, tokenHash: string) {
  return (
    (await db(em)
      .selectFrom('user_invites')
      .select(['id', 'account_id', 'user_id', 'expires_at'])
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', sql<string>`now()`)
      .executeTakeFirst()) ?? null
  );
}

/** Uses an invitation, only if it is still live: true for exactly one of two racing uses. */
export async function useInvite(em: EntityManager, id: number): Promise<boolean> {
  const r = await db(em)
    .updateTable('user_invites')
    .set({ used_at: sql`now()` })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<string>`now()`)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
