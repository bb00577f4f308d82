import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../../entities/db.js';
import { hashToken, newSecret, tokenHint, MCP_PREFIX } from '../platform/secrets.js';
import { newUid } from '../platform/ids.js';

// Account, user and key creation, shared by the operator services (settings.ts) and the dev bootstrap.

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
    [accountId, input.userId, kind, input.name, hashToken(token), tokenHint(token), input.expiresAt ?? null],
  );
  return { ...row!, token };
}
