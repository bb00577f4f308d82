import { isSupportedCountry } from 'libphonenumber-js/max';
import { numericId } from '../platform/ids.js';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { OperatorContext, RequestContext } from '../platform/context.js';
import { accountForContext, createAccount, createApiKey, createUser } from './accounts.js';
import {
  accountById,
  accountExists,
  accountIdByUid,
  allAccounts,
  keysOf,
  revokeKeyRow,
  updateAccountColumns,
  updateUserColumns,
  userInAccount,
  userWithEmail,
  usersOf,
  type KeyRecord,
} from './store.js';
import { iso, withIsoTimestamps } from '../platform/time.js';

// The operator's side of the account family ("Settings" in the contract): accounts, their users
// and their credentials. Every function acts as the operator on the account it names; a missing
// account is not found, never created on the fly.

export type KeyKind = 'rest' | 'mcp';

/**
 * The account an operator path names: its numeric id or its public uid (`acc_…`, what account
 * creation answers), else 404.
 */
export async function accountRef(oc: OperatorContext, ref: string): Promise<number> {
  if (!/^acc_/.test(ref)) return numericId(ref, 'Account');
  const id = await accountIdByUid(oc.em, ref);
  if (id === null) throw notFound('Account');
  return id;
}

/**
 * The request context of the account an operator path names, acting as the operator: the account's
 * own services (shops, products, orders, baskets) then answer the operator exactly what they answer
 * the account, scoped to it as for the account's keys (another account's id is 404 there too).
 */
export async function actingForAccount(oc: OperatorContext, ref: string): Promise<RequestContext> {
  const account = await accountForContext(oc.em, await accountRef(oc, ref));
  if (!account) throw notFound('Account');
  return { account, actor: oc.actor, em: oc.em, log: oc.log.child({ account: account.id }) };
}

export async function requireAccount(oc: OperatorContext, accountId: number): Promise<void> {
  if (!Number.isInteger(accountId) || !(await accountExists(oc.em, accountId))) throw notFound('Account');
}

export const listAccounts = async (oc: OperatorContext) => (await allAccounts(oc.em)).map(withIsoTimestamps);

export async function openAccount(
  oc: OperatorContext,
  input: { name: string; currency?: string; billing_mode?: 'prepaid' | 'postpaid'; wallet_balance?: number },
) {
  const row = await createAccount(oc.em, input);
  oc.log.info({ actor: 'operator', account: row.id }, 'account created');
  return withIsoTimestamps(row);
}

export async function getAccount(oc: OperatorContext, accountId: number) {
  const row = await accountById(oc.em, accountId);
  if (!row) throw notFound('Account');
  return withIsoTimestamps(row);
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
    country?: string | null;
  },
) {
  // A code with a numbering plan (every inhabited ISO 3166-1 country): what a national number is read in.
  if (typeof input.country === 'string' && !isSupportedCountry(input.country.toUpperCase()))
    throw validationFailed({ country: ['Not an ISO 3166-1 alpha-2 country code with a phone numbering plan.'] });
  const row = await updateAccountColumns(oc.em, accountId, {
    ...input,
    currency: input.currency?.toUpperCase(),
    country: input.country === undefined || input.country === null ? input.country : input.country.toUpperCase(),
    wallet_balance: input.wallet_balance === undefined ? undefined : String(input.wallet_balance),
  });
  if (!row) throw notFound('Account');
  oc.log.info({ actor: 'operator', account: accountId, fields: Object.keys(input) }, 'account changed');
  return withIsoTimestamps(row);
}

export async function listUsers(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await usersOf(oc.em, accountId)).map(withIsoTimestamps);
}

export async function addUser(
  oc: OperatorContext,
  accountId: number,
  input: { email: string; name: string; permissions?: readonly string[] },
) {
  await requireAccount(oc, accountId);
  if (await userWithEmail(oc.em, accountId, input.email)) {
    throw conflict('A user with this email already exists in the account.');
  }
  return withIsoTimestamps(
    await createUser(oc.em, accountId, { email: input.email, name: input.name, permissions: [...(input.permissions ?? [])] }),
  );
}

/** Change permissions, rename, deactivate or reactivate: the user's keys follow at once. */
export async function updateUser(
  oc: OperatorContext,
  accountId: number,
  userId: number,
  input: { name?: string; active?: boolean; permissions?: readonly string[] },
) {
  const row = await updateUserColumns(oc.em, accountId, userId, {
    name: input.name,
    active: input.active,
    permissions: input.permissions ? [...input.permissions] : undefined,
  });
  if (!row) throw notFound('User');
  return withIsoTimestamps(row);
}

/** A key as the operator sees it after creation: a hint, never the secret. */
export const keyView = (k: Omit<KeyRecord, 'token_hash' | 'last_used_at'> & { last_used_at?: string | null }) => ({
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
  if (input.user_id != null && !(await userInAccount(oc.em, accountId, input.user_id))) {
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
  return (await keysOf(oc.em, accountId, kind)).map(keyView);
}

/** Revocation is permanent: a second revoke keeps the first time. */
export async function revokeKey(oc: OperatorContext, accountId: number, kind: KeyKind, keyId: number) {
  const row = await revokeKeyRow(oc.em, accountId, kind, keyId);
  if (!row) throw notFound('Key');
  oc.log.info({ actor: 'operator', account: accountId, key: keyId, kind }, 'key revoked');
  return keyView(row);
}
