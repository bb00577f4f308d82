import type { EntityManager } from '@mikro-orm/postgresql';
import { hashToken, newSecret, tokenHint, MCP_PREFIX } from '../platform/secrets.js';
import { newUid } from '../platform/ids.js';
import type { AccountRow } from '../platform/context.js';
import { accountById, insertAccount, insertKey, insertUser, type AccountRecord } from './store.js';

// Account, user and key creation, shared by the operator services (settings.ts) and the dev bootstrap.

export async function createAccount(
  em: EntityManager,
  input: { name: string; currency?: string; billing_mode?: 'prepaid' | 'postpaid'; wallet_balance?: number },
) {
  return insertAccount(em, {
    uid: newUid('acc'),
    name: input.name,
    wallet_balance: String(input.wallet_balance ?? 0),
    currency: (input.currency ?? 'USD').toUpperCase(),
    billing_mode: input.billing_mode ?? 'prepaid',
  });
}

export async function createUser(em: EntityManager, accountId: number, input: { email: string; name: string; permissions: string[] }) {
  return insertUser(em, { account_id: accountId, ...input });
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
  const row = await insertKey(em, {
    account_id: accountId,
    user_id: input.userId,
    kind,
    name: input.name,
    token_hash: hashToken(token),
    token_hint: tokenHint(token),
    expires_at: input.expiresAt ?? null,
  });
  return { ...row, token };
}

/** The account as a request context carries it. */
export const contextAccount = (a: Pick<AccountRecord, keyof AccountRow>): AccountRow => ({
  id: a.id,
  uid: a.uid,
  name: a.name,
  status: a.status,
  wallet_balance: a.wallet_balance,
  currency: a.currency,
  billing_mode: a.billing_mode,
  created_at: a.created_at,
});

/** The account a context of the service's own work (a workflow, an operation run) acts for; null when it is gone. */
export const accountForContext = (em: EntityManager, accountId: number): Promise<AccountRow | null> => accountById(em, accountId);
