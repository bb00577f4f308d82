import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one, onePlanned } from '../../entities/db.js';
import { tablesOf, type Row } from '../../entities/database.js';
import { RELEASE_BEFORE_FLUSH } from '../platform/durable-commit.js';
import { WINDOW_MS, countInWindowSql, previousWindowSql } from '../platform/rate-windows.js';

// The account family's statements: accounts, users, api_keys, account_notices. The only module that
// names these tables; the rest of the family and other families (through index.ts) call these.

const db = (em: EntityManager) => tablesOf(em, 'account');

export type AccountRecord = Row<'account', 'accounts'>;
export type UserRecord = Row<'account', 'users'>;
export type KeyRecord = Row<'account', 'api_keys'>;
export type NoticeRecord = Row<'account', 'account_notices'>;

/** Every column of `accounts`, in the table's order (what `select *` read). */
const ACCOUNT_COLUMNS = [
  'id',
  'uid',
  'name',
  'status',
  'wallet_balance',
  'currency',
  'billing_mode',
  'country',
  'created_at',
  'updated_at',
] as const;
const USER_COLUMNS = ['id', 'account_id', 'email', 'name', 'permissions', 'active', 'created_at', 'updated_at'] as const;
/** A key as anyone may see it: never its hash. */
const KEY_COLUMNS = [
  'id',
  'account_id',
  'user_id',
  'kind',
  'name',
  'token_hint',
  'expires_at',
  'revoked_at',
  'last_used_at',
  'created_at',
] as const;

/** A json column's value as the statement sends it: text (pg would send a JS array as a Postgres array). */
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

// Accounts

export const insertAccount = (em: EntityManager, v: Pick<AccountRecord, 'uid' | 'name' | 'wallet_balance' | 'currency' | 'billing_mode'>) =>
  db(em)
    .insertInto('accounts')
    .values({ ...v, status: 'active', created_at: sql`now()`, updated_at: sql`now()` })
    .returning(ACCOUNT_COLUMNS)
    .executeTakeFirstOrThrow();

export const accountById = async (em: EntityManager, id: number) =>
  (await db(em).selectFrom('accounts').select(ACCOUNT_COLUMNS).where('id', '=', id).executeTakeFirst()) ?? null;

export const accountIdByUid = async (em: EntityManager, uid: string) =>
  (await db(em).selectFrom('accounts').select('id').where('uid', '=', uid).executeTakeFirst())?.id ?? null;

export const accountExists = async (em: EntityManager, id: number) =>
  (await db(em).selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;

export const allAccounts = (em: EntityManager) => db(em).selectFrom('accounts').select(ACCOUNT_COLUMNS).orderBy('id').execute();

/** Changes the columns given (an undefined one is left alone, as Kysely leaves it out) and moves updated_at; null when there is no such account. */
export const updateAccountColumns = async (
  em: EntityManager,
  id: number,
  set: Partial<Pick<AccountRecord, 'name' | 'status' | 'wallet_balance' | 'currency' | 'billing_mode' | 'country'>>,
) =>
  (await db(em)
    .updateTable('accounts')
    // Column names from this fixed list, never from the caller's keys.
    .set({
      name: set.name,
      status: set.status,
      wallet_balance: set.wallet_balance,
      currency: set.currency,
      billing_mode: set.billing_mode,
      country: set.country,
      updated_at: sql`now()`,
    })
    .where('id', '=', id)
    .returning(ACCOUNT_COLUMNS)
    .executeTakeFirst()) ?? null;

/** An account's status (active, suspended); null when there is no such account. */
export const accountStatus = async (em: EntityManager, id: number) =>
  (await db(em).selectFrom('accounts').select('status').where('id', '=', id).executeTakeFirst())?.status ?? null;

/** An account's currency (the default of its shops and prices); null when there is no such account. */
export const accountCurrency = async (em: EntityManager, id: number) =>
  (await db(em).selectFrom('accounts').select('currency').where('id', '=', id).executeTakeFirst())?.currency ?? null;

/** An account's country (ISO 3166-1 alpha-2, the default region of national phone numbers); null when none is set. */
export const accountCountry = async (em: EntityManager, id: number) =>
  (await db(em).selectFrom('accounts').select('country').where('id', '=', id).executeTakeFirst())?.country ?? null;

/**
 * The status of the account `accountExpr` (an SQL expression) as a scalar subquery, for a set-based
 * statement of another family that must read it in the same statement (a batch's rows, a row lock).
 */
export const accountStatusSql = (accountExpr: string) => `(select status from accounts where accounts.id = ${accountExpr})`;

/** The currency of the account `accountExpr` as a scalar subquery (as accountStatusSql). */
export const accountCurrencySql = (accountExpr: string) => `(select currency from accounts where accounts.id = ${accountExpr})`;

// Wallet

/**
 * The debit as SQL (`returning id`: a row when it is made), for a statement that writes what is paid
 * for in the same breath (a CTE whose row the write requires). Its commit does not wait for the
 * flush when asked (services/platform/durable-commit.ts): the caller then answers only after durableCommit.
 * `onlyIf` is the caller's own condition on that statement (no parameters), e.g. that what it pays
 * for can be written at all: unmet, nothing is debited.
 */
export function debitSql(
  accountId: number,
  segments: number,
  pricePerSegment: string,
  opts: { releaseBeforeFlush?: boolean; onlyIf?: string } = {},
) {
  return {
    sql: `update accounts set wallet_balance = case when billing_mode = 'prepaid' then wallet_balance - (?::numeric * ?) else wallet_balance end, updated_at = now()
      where id = ? and (billing_mode <> 'prepaid' or wallet_balance >= ?::numeric * ?)${opts.releaseBeforeFlush ? ` and ${RELEASE_BEFORE_FLUSH}` : ''}${opts.onlyIf ? ` and (${opts.onlyIf})` : ''} returning id`,
    params: [pricePerSegment, segments, accountId, pricePerSegment, segments] as unknown[],
  };
}

/** Runs debitSql on its own: true when the debit was made. */
export async function debit(em: EntityManager, d: { sql: string; params: unknown[] }): Promise<boolean> {
  return (await one<Pick<AccountRecord, 'id'>>(em, d.sql, d.params)) !== null;
}

// Users

export const insertUser = (em: EntityManager, v: Pick<UserRecord, 'account_id' | 'email' | 'name' | 'permissions'>) =>
  db(em)
    .insertInto('users')
    .values({ ...v, permissions: json(v.permissions), active: true, created_at: sql`now()`, updated_at: sql`now()` })
    .returning(USER_COLUMNS)
    .executeTakeFirstOrThrow();

export const usersOf = (em: EntityManager, accountId: number) =>
  db(em).selectFrom('users').select(USER_COLUMNS).where('account_id', '=', accountId).orderBy('id').execute();

/** The ids of an account's users (what a data table's grants may name). */
export const userIdsOf = async (em: EntityManager, accountId: number) =>
  (await db(em).selectFrom('users').select('id').where('account_id', '=', accountId).execute()).map((u) => Number(u.id));

export const userWithEmail = async (em: EntityManager, accountId: number, email: string) =>
  (await db(em).selectFrom('users').select('id').where('account_id', '=', accountId).where('email', '=', email).executeTakeFirst()) ?? null;

export const userInAccount = async (em: EntityManager, accountId: number, userId: number) =>
  (await db(em).selectFrom('users').select('id').where('id', '=', userId).where('account_id', '=', accountId).executeTakeFirst()) !==
  undefined;

export const updateUserColumns = async (
  em: EntityManager,
  accountId: number,
  userId: number,
  set: { name?: string; active?: boolean; permissions?: string[] },
) =>
  (await db(em)
    .updateTable('users')
    .set({
      name: set.name,
      active: set.active,
      permissions: set.permissions === undefined ? undefined : json(set.permissions),
      updated_at: sql`now()`,
    })
    .where('id', '=', userId)
    .where('account_id', '=', accountId)
    .returning(USER_COLUMNS)
    .executeTakeFirst()) ?? null;

// Keys

export const insertKey = (
  em: EntityManager,
  v: Pick<KeyRecord, 'account_id' | 'user_id' | 'kind' | 'name' | 'token_hash' | 'token_hint'> & { expires_at: Date | null },
) =>
  db(em)
    .insertInto('api_keys')
    .values({ ...v, created_at: sql`now()` })
    .returning(['id', 'account_id', 'user_id', 'kind', 'name', 'token_hint', 'expires_at', 'revoked_at', 'created_at'])
    .executeTakeFirstOrThrow();

export const keysOf = (em: EntityManager, accountId: number, kind: KeyRecord['kind']) =>
  db(em).selectFrom('api_keys').select(KEY_COLUMNS).where('account_id', '=', accountId).where('kind', '=', kind).orderBy('id').execute();

/**
 * A key of the account with its issuer as they stand now, for work a key started that acts later
 * (an agent run's tool calls): null when the account has no such key.
 */
export const issuedKey = (em: EntityManager, accountId: number, keyId: number) =>
  one<{
    id: number;
    kind: KeyRecord['kind'];
    name: string;
    user_id: number | null;
    expires_at: string | null;
    revoked_at: string | null;
    expired: boolean;
    user_active: boolean | null;
    user_permissions: string[] | null;
  }>(
    em,
    `select k.id, k.kind, k.name, k.user_id, k.expires_at, k.revoked_at, coalesce(k.expires_at <= now(), false) as expired,
            u.active as user_active, u.permissions as user_permissions
       from api_keys k left join users u on u.id = k.user_id and u.account_id = k.account_id
      where k.account_id = ? and k.id = ?`,
    [accountId, keyId],
  );

/** Revocation is permanent: a second revoke keeps the first time. Null when the account has no such key. */
export const revokeKeyRow = async (em: EntityManager, accountId: number, kind: KeyRecord['kind'], keyId: number) =>
  (await db(em)
    .updateTable('api_keys')
    .set({ revoked_at: sql`coalesce(revoked_at, now())` })
    .where('id', '=', keyId)
    .where('account_id', '=', accountId)
    .where('kind', '=', kind)
    .returning(KEY_COLUMNS)
    .executeTakeFirst()) ?? null;

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

// Authentication

/** One row of the authentication statement: the key, its account, its issuer and the request's rate count. */
export type CredentialRow = Pick<
  AccountRecord,
  'id' | 'uid' | 'name' | 'status' | 'wallet_balance' | 'currency' | 'billing_mode' | 'created_at'
> & {
  key_id: KeyRecord['id'];
  kind: KeyRecord['kind'];
  key_name: KeyRecord['name'];
  user_id: KeyRecord['user_id'];
  expires_at: KeyRecord['expires_at'];
  revoked_at: KeyRecord['revoked_at'];
  last_used_at: KeyRecord['last_used_at'];
  expired: boolean;
  touch_due: boolean;
  /** Read only when user_id is set (the left join found the issuer). */
  user_active: UserRecord['active'];
  user_permissions: UserRecord['permissions'] | null;
  admitted: boolean;
  /** Null when the key is not admitted (nothing was counted). */
  rate_count: Row<'platform', 'rate_limit_windows'>['count'] | null;
  rate_previous: Row<'platform', 'rate_limit_windows'>['count'];
  /** Digest of the principal but its wallet balance (PRINCIPAL_SQL): equal digests, the same principal. */
  principal_fp: string;
};

/**
 * The key by its hash with its account, issuer and `admitted` (right surface, not revoked, not
 * expired, account active), as the CTEs `k` and `p`. `principal_fp` digests everything of the
 * principal a request acts as (key, account, issuer and permissions) but the wallet balance: two rows
 * with the same digest name the same principal. Every send moves the balance, and a write admitted
 * in its own statement (admissionSql) reads the balance from the row it debits, never from the
 * principal, so a send does not make the account's next write a different principal.
 * Params: surface, token hash.
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
       select k.*,
              md5(row(k.key_id, k.kind, k.key_name, k.user_id, k.expires_at, k.revoked_at, k.id, k.uid, k.name, k.status,
                      k.currency, k.billing_mode, k.created_at, k.user_active, k.user_permissions)::text) as principal_fp
         from k
     )`;

/**
 * One round trip: the key looked up by its hash and, only when it is admitted (right surface, not
 * revoked, not expired, account active), this request counted in its one-minute window, the
 * previous minute's count read (the sliding window).
 * A refused token therefore counts against nobody's window. Expiry is judged by the database clock.
 */
export async function findCredential(
  em: EntityManager,
  q: { tokenHash: string; surface: 'rest' | 'mcp'; windowStart: number; throttle?: 'v3' | 'engine' },
): Promise<CredentialRow | null> {
  // The window the request is counted in: the key's v3 window, or the agent engine's own (/api/engine).
  const bucket = q.throttle === 'engine' ? `'engine:' || p.key_id` : `'key:' || p.key_id`;
  // Every authenticated request runs it: planned once per connection (onePlanned). Its commit does
  // not wait for the WAL flush (docs/security.md, Rate limit): every request of a key updates the
  // key's window row, which a flush would hold locked against the key's next request; a count lost
  // to a database crash is harmless.
  return onePlanned<CredentialRow>(
    em,
    `with ${PRINCIPAL_SQL}, hit as (
       ${countInWindowSql(bucket, 'from p where p.admitted')}
     )
     select p.*, (select count from hit) as rate_count, ${previousWindowSql(bucket)} as rate_previous
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

// People (the MCP authorization server: sign-in, consent and the OAuth bearer of the MCP door)

/** A person as sign-in and consent see them: the user row and the account it belongs to. */
export type PersonRow = Pick<UserRecord, 'id' | 'account_id' | 'email' | 'name' | 'active' | 'permissions'> & {
  account_name: AccountRecord['name'];
  account_uid: AccountRecord['uid'];
  account_status: AccountRecord['status'];
};

const PERSON_SQL = `select u.id, u.account_id, u.email, u.name, u.active, u.permissions,
                           a.name as account_name, a.uid as account_uid, a.status as account_status
                      from users u join accounts a on a.id = u.account_id`;

/** The person a subject names (its account and user must agree); null when there is none. */
export const personById = (em: EntityManager, accountId: number, userId: number) =>
  one<PersonRow>(em, `${PERSON_SQL} where u.id = ? and u.account_id = ?`, [userId, accountId]);

/** Every user row with this email, in any account (emails are unique per account only), at most `limit`. */
export const peopleWithEmail = (em: EntityManager, email: string, limit = 20) =>
  many<PersonRow>(em, `${PERSON_SQL} where lower(u.email) = lower(?) order by u.id limit ?`, [email, limit]);

/** One row of the OAuth bearer's authentication statement: the person, their account and the request's rate count. */
export type PersonCredentialRow = Pick<
  AccountRecord,
  'id' | 'uid' | 'name' | 'status' | 'wallet_balance' | 'currency' | 'billing_mode' | 'created_at'
> & {
  user_id: UserRecord['id'];
  user_active: UserRecord['active'];
  user_permissions: UserRecord['permissions'];
  admitted: boolean;
  rate_count: Row<'platform', 'rate_limit_windows'>['count'] | null;
  rate_previous: Row<'platform', 'rate_limit_windows'>['count'];
};

/**
 * The person an OAuth access token names, admitted in the statement of the family that finds the
 * token (services/oauth findAccessTokenHolder): CTEs over `t`, which that statement defines first
 * with account_id, user_id and bucket (the grant: one rate window per connection, as a key has one).
 * `p` is the user with their account (no row when there is no such person); only when the account
 * is active is the request counted in the bucket's window (`hit`). Select PERSON_CREDENTIAL_COLUMNS
 * from `p`. Placeholders, after the caller's own: the window start, then the previous window's
 * start (personCredentialParams).
 */
export const PERSON_CREDENTIAL_SQL = `p as (
       select a.id, a.uid, a.name, a.status, a.wallet_balance, a.currency, a.billing_mode, a.created_at,
              u.id as user_id, u.active as user_active, u.permissions as user_permissions,
              (a.status = 'active') as admitted, t.bucket
         from t join users u on u.id = t.user_id and u.account_id = t.account_id join accounts a on a.id = u.account_id
     ), hit as (
       ${countInWindowSql('p.bucket', 'from p where p.admitted')}
     )`;

/** The PersonCredentialRow columns of a statement over PERSON_CREDENTIAL_SQL. */
export const PERSON_CREDENTIAL_COLUMNS = `p.*, (select count from hit) as rate_count, ${previousWindowSql('p.bucket')} as rate_previous`;

/** The placeholders PERSON_CREDENTIAL_SQL and PERSON_CREDENTIAL_COLUMNS add, in order. */
export const personCredentialParams = (windowStart: number) => [windowStart, windowStart - WINDOW_MS];

// Notices

/**
 * Records notices in one statement; a notice whose dedupe key the account already has is skipped
 * (on conflict do nothing). Answers how many were recorded.
 */
export const insertNotices = (tx: EntityManager, accountId: number, notices: readonly unknown[]) =>
  exec(
    tx,
    `insert into account_notices (account_id, kind, message, data, dedupe_key, created_at)
     select ?, e.n->>'kind', e.n->>'message', coalesce(e.n->'data', '{}'::jsonb), e.n->>'dedupeKey', now()
       from jsonb_array_elements(?::jsonb) with ordinality as e(n, ord)
      order by e.ord
     on conflict (account_id, dedupe_key) do nothing`,
    [accountId, JSON.stringify(notices)],
  );

/** An account's notices (of one kind when given), newest first, one page, and how many there are in all. */
export async function noticesPage(em: EntityManager, accountId: number, q: { kind?: string; limit: number; offset: number }) {
  let base = db(em).selectFrom('account_notices').where('account_id', '=', accountId);
  if (q.kind) base = base.where('kind', '=', q.kind);
  const total = Number((await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
  const rows = await base
    .select(['id', 'account_id', 'kind', 'message', 'data', 'created_at', 'read_at'])
    .orderBy('id', 'desc')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  return { total, rows };
}
