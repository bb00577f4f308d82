import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../entities/db.js';
import { notFound, validationFailed } from '../platform/errors.js';
import { hashToken, newSecret, MCP_PREFIX } from '../platform/secrets.js';
import { newUid } from '../platform/ids.js';

// Operator ("Settings") actions. They run with the operator token, never with an account key.

export async function createAccount(
  em: EntityManager,
  input: { name: string; currency?: string; billing_mode?: 'prepaid' | 'postpaid'; wallet_balance?: number },
) {
  return one<Record<string, unknown>>(
    em,
    `insert into accounts (uid, name, status, wallet_balance, currency, billing_mode, created_at, updated_at)
     values (?, ?, 'active', ?, ?, ?, now(), now()) returning *`,
    [
      newUid('acc'),
      input.name,
      String(input.wallet_balance ?? 0),
      (input.currency ?? 'USD').toUpperCase(),
      input.billing_mode ?? 'prepaid',
    ],
  );
}

export async function createUser(em: EntityManager, accountId: number, input: { email: string; name: string; permissions: string[] }) {
  return one<Record<string, unknown>>(
    em,
    `insert into users (account_id, email, name, permissions, active, created_at, updated_at)
     values (?, ?, ?, ?, true, now(), now()) returning *`,
    [accountId, input.email, input.name, JSON.stringify(input.permissions)],
  );
}

/**
 * Creates a REST key (or an MCP connection credential). The plaintext is returned once and only its
 * SHA-256 is kept: 64 random characters carry far more entropy than a slow hash would add.
 * `userId: null` makes a key with no issuer, as every key created before 7 September 2026 was.
 */
export async function createApiKey(
  em: EntityManager,
  accountId: number,
  input: { name: string; userId: number | null; kind?: 'rest' | 'mcp'; expiresAt?: Date | null },
) {
  const kind = input.kind ?? 'rest';
  const secret = newSecret(64);
  const token = kind === 'mcp' ? `${MCP_PREFIX}${secret}` : secret;
  const row = await one<Record<string, unknown>>(
    em,
    `insert into api_keys (account_id, user_id, kind, name, token_hash, token_hint, expires_at, created_at)
     values (?, ?, ?, ?, ?, ?, ?, now()) returning id, account_id, user_id, kind, name, token_hint, expires_at, revoked_at, created_at`,
    [accountId, input.userId, kind, input.name, hashToken(token), `${token.slice(0, 4)}…${token.slice(-4)}`, input.expiresAt ?? null],
  );
  return { ...row!, token };
}

/** Operator reads and changes of accounts, users and keys. A missing account is not found. */
export async function requireAccount(em: EntityManager, accountId: number): Promise<void> {
  if (!Number.isInteger(accountId) || !(await one(em, 'select id from accounts where id = ?', [accountId]))) throw notFound('Account');
}

export const listAccounts = (em: EntityManager) => many(em, 'select * from accounts order by id');

export async function getAccount(em: EntityManager, accountId: number) {
  const row = Number.isInteger(accountId) ? await one(em, 'select * from accounts where id = ?', [accountId]) : null;
  if (!row) throw notFound('Account');
  return row;
}

// Column names come from this fixed list, never from request keys.
const ACCOUNT_COLUMNS = ['name', 'status', 'wallet_balance', 'currency', 'billing_mode'] as const;
const USER_COLUMNS = ['name', 'active', 'permissions'] as const;

function assignments<C extends string>(columns: readonly C[], input: Partial<Record<C, unknown>>) {
  const cols = columns.filter((c) => input[c] !== undefined);
  return { sql: cols.map((c) => `${c} = ?`).join(', '), values: cols.map((c) => input[c]) };
}

export async function updateAccount(
  em: EntityManager,
  accountId: number,
  input: { name?: string; status?: string; wallet_balance?: number; currency?: string; billing_mode?: string },
) {
  const set = assignments(ACCOUNT_COLUMNS, {
    ...input,
    currency: input.currency?.toUpperCase(),
    wallet_balance: input.wallet_balance === undefined ? undefined : String(input.wallet_balance),
  });
  const row = Number.isInteger(accountId)
    ? await one(em, `update accounts set ${set.sql}, updated_at = now() where id = ? returning *`, [...set.values, accountId])
    : null;
  if (!row) throw notFound('Account');
  return row;
}

export async function listUsers(em: EntityManager, accountId: number) {
  await requireAccount(em, accountId);
  return many(em, 'select * from users where account_id = ? order by id', [accountId]);
}

export async function addUser(em: EntityManager, accountId: number, input: { email: string; name: string; permissions?: string[] }) {
  await requireAccount(em, accountId);
  if (await one(em, 'select id from users where account_id = ? and email = ?', [accountId, input.email])) {
    throw validationFailed({ email: ['A user with this email already exists in the account.'] });
  }
  return createUser(em, accountId, { email: input.email, name: input.name, permissions: input.permissions ?? [] });
}

export async function updateUser(
  em: EntityManager,
  accountId: number,
  userId: number,
  input: { name?: string; active?: boolean; permissions?: string[] },
) {
  const set = assignments(USER_COLUMNS, { ...input, permissions: input.permissions ? JSON.stringify(input.permissions) : undefined });
  const row = await one(em, `update users set ${set.sql}, updated_at = now() where id = ? and account_id = ? returning *`, [
    ...set.values,
    userId,
    accountId,
  ]);
  if (!row) throw notFound('User');
  return row;
}

export const keyView = (k: Record<string, unknown>) => ({
  id: k.id,
  account_id: k.account_id,
  user_id: k.user_id,
  kind: k.kind,
  name: k.name,
  hint: k.token_hint,
  expires_at: k.expires_at,
  revoked_at: k.revoked_at,
  last_used_at: k.last_used_at ?? null,
  created_at: k.created_at,
});

export async function issueKey(
  em: EntityManager,
  accountId: number,
  kind: 'rest' | 'mcp',
  input: { name: string; user_id?: number | null; expires_at?: string | null },
) {
  await requireAccount(em, accountId);
  if (input.user_id != null && !(await one(em, 'select id from users where id = ? and account_id = ?', [input.user_id, accountId]))) {
    throw validationFailed({ user_id: ['The issuing user does not belong to this account.'] });
  }
  const key = await createApiKey(em, accountId, {
    name: input.name,
    userId: input.user_id ?? null,
    kind,
    expiresAt: input.expires_at ? new Date(input.expires_at) : null,
  });
  return { ...keyView(key), token: key.token };
}

export async function listKeys(em: EntityManager, accountId: number, kind: 'rest' | 'mcp') {
  await requireAccount(em, accountId);
  return (
    await many<Record<string, unknown>>(em, 'select * from api_keys where account_id = ? and kind = ? order by id', [accountId, kind])
  ).map(keyView);
}

/** Revocation is permanent: a second revoke keeps the first time. */
export async function revokeKey(em: EntityManager, accountId: number, kind: 'rest' | 'mcp', keyId: number) {
  const row = await one<Record<string, unknown>>(
    em,
    'update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ? and account_id = ? and kind = ? returning *',
    [keyId, accountId, kind],
  );
  if (!row) throw notFound('Key');
  return keyView(row);
}
