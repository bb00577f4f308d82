import { numericId } from '../platform/ids.js';
import { many, one } from '../../entities/db.js';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { createAccount, createApiKey, createUser } from './accounts.js';
import { iso, withIsoTimestamps } from '../platform/time.js';

// The operator's side of the account family ("Settings" in the contract): accounts, their users
// and their credentials. Every function acts as the operator on the account it names; a missing
// account is not found, never created on the fly.

export type Row = Record<string, unknown>;
export type KeyKind = 'rest' | 'mcp';

/**
 * The account an operator path names: its numeric id or its public uid (`acc_…`, what account
 * creation answers), else 404.
 */
export async function accountRef(oc: OperatorContext, ref: string): Promise<number> {
  if (!/^acc_/.test(ref)) return numericId(ref, 'Account');
  const row = await one<{ id: number }>(oc.em, 'select id from accounts where uid = ?', [ref]);
  if (!row) throw notFound('Account');
  return row.id;
}

export async function requireAccount(oc: OperatorContext, accountId: number): Promise<void> {
  if (!Number.isInteger(accountId) || !(await one(oc.em, 'select id from accounts where id = ?', [accountId]))) throw notFound('Account');
}

export const listAccounts = async (oc: OperatorContext) =>
  (await many<Row>(oc.em, 'select * from accounts order by id')).map(withIsoTimestamps);

export async function openAccount(
  oc: OperatorContext,
  input: { name: string; currency?: string; billing_mode?: 'prepaid' | 'postpaid'; wallet_balance?: number },
): Promise<Row> {
  const row = (await createAccount(oc.em, input))!;
  oc.log.info({ actor: 'operator', account: row.id }, 'account created');
  return withIsoTimestamps(row);
}

export async function getAccount(oc: OperatorContext, accountId: number): Promise<Row> {
  const row = await one<Row>(oc.em, 'select * from accounts where id = ?', [accountId]);
  if (!row) throw notFound('Account');
  return withIsoTimestamps(row);
}

// Column names come from these fixed lists, never from request keys.
const ACCOUNT_COLUMNS = ['name', 'status', 'wallet_balance', 'currency', 'billing_mode'] as const;
const USER_COLUMNS = ['name', 'active', 'permissions'] as const;

function assignments<C extends string>(columns: readonly C[], input: Partial<Record<C, unknown>>) {
  const cols = columns.filter((c) => input[c] !== undefined);
  return { sql: cols.map((c) => `${c} = ?, `).join(''), values: cols.map((c) => input[c]) };
}

/** Rename, suspend or reactivate; set the wallet (a decimal string, never a float), currency and billing mode. */
export async function updateAccount(
  oc: OperatorContext,
  accountId: number,
  input: {
    name?: string;
    status?: 'active' | 'suspended';
    wallet_balance?: number;
    currency?: string;
    billing_mode?: 'prepaid' | 'postpaid';
  },
): Promise<Row> {
  const set = assignments(ACCOUNT_COLUMNS, {
    ...input,
    currency: input.currency?.toUpperCase(),
    wallet_balance: input.wallet_balance === undefined ? undefined : String(input.wallet_balance),
  });
  const row = await one<Row>(oc.em, `update accounts set ${set.sql}updated_at = now() where id = ? returning *`, [
    ...set.values,
    accountId,
  ]);
  if (!row) throw notFound('Account');
  oc.log.info({ actor: 'operator', account: accountId, fields: Object.keys(input) }, 'account changed');
  return withIsoTimestamps(row);
}

export async function listUsers(oc: OperatorContext, accountId: number): Promise<Row[]> {
  await requireAccount(oc, accountId);
  return (await many<Row>(oc.em, 'select * from users where account_id = ? order by id', [accountId])).map(withIsoTimestamps);
}

export async function addUser(
  oc: OperatorContext,
  accountId: number,
  input: { email: string; name: string; permissions?: readonly string[] },
): Promise<Row> {
  await requireAccount(oc, accountId);
  if (await one(oc.em, 'select id from users where account_id = ? and email = ?', [accountId, input.email])) {
    throw conflict('A user with this email already exists in the account.');
  }
  return withIsoTimestamps(
    (await createUser(oc.em, accountId, { email: input.email, name: input.name, permissions: [...(input.permissions ?? [])] }))!,
  );
}

/** Change permissions, rename, deactivate or reactivate: the user's keys follow at once. */
export async function updateUser(
  oc: OperatorContext,
  accountId: number,
  userId: number,
  input: { name?: string; active?: boolean; permissions?: readonly string[] },
): Promise<Row> {
  const set = assignments(USER_COLUMNS, { ...input, permissions: input.permissions ? JSON.stringify(input.permissions) : undefined });
  const row = await one<Row>(oc.em, `update users set ${set.sql}updated_at = now() where id = ? and account_id = ? returning *`, [
    ...set.values,
    userId,
    accountId,
  ]);
  if (!row) throw notFound('User');
  return withIsoTimestamps(row);
}

/** A key as the operator sees it after creation: a hint, never the secret. */
export const keyView = (k: Row) => ({
  id: k.id,
  account_id: k.account_id,
  user_id: k.user_id,
  kind: k.kind,
  name: k.name,
  hint: k.token_hint,
  expires_at: iso(k.expires_at),
  revoked_at: iso(k.revoked_at),
  last_used_at: iso(k.last_used_at),
  created_at: iso(k.created_at),
});

/**
 * A REST key or an MCP connection credential (svc_mcp_…), its secret in this answer only. The
 * issuing user, when named, must belong to the account: the key acts with that user's permissions.
 */
export async function issueKey(
  oc: OperatorContext,
  accountId: number,
  kind: KeyKind,
  input: { name: string; user_id?: number | null; expires_at?: string | null },
) {
  await requireAccount(oc, accountId);
  if (input.user_id != null && !(await one(oc.em, 'select id from users where id = ? and account_id = ?', [input.user_id, accountId]))) {
    throw validationFailed({ user_id: ['The issuing user does not belong to this account.'] });
  }
  const key = await createApiKey(oc.em, accountId, {
    name: input.name,
    userId: input.user_id ?? null,
    kind,
    expiresAt: input.expires_at ? new Date(input.expires_at) : null,
  });
  const view = keyView(key);
  oc.log.info({ actor: 'operator', account: accountId, key: view.id, kind }, 'key issued');
  return { ...view, token: key.token };
}

export async function listKeys(oc: OperatorContext, accountId: number, kind: KeyKind) {
  await requireAccount(oc, accountId);
  return (await many<Row>(oc.em, 'select * from api_keys where account_id = ? and kind = ? order by id', [accountId, kind])).map(keyView);
}

/** Revocation is permanent: a second revoke keeps the first time. */
export async function revokeKey(oc: OperatorContext, accountId: number, kind: KeyKind, keyId: number) {
  const row = await one<Row>(
    oc.em,
    'update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ? and account_id = ? and kind = ? returning *',
    [keyId, accountId, kind],
  );
  if (!row) throw notFound('Key');
  oc.log.info({ actor: 'operator', account: accountId, key: keyId, kind }, 'key revoked');
  return keyView(row);
}
