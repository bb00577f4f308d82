import type { RequestContext } from '../platform/context.js';

export const profileSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string' },
    created_at: { type: 'string' },
  },
} as const;
export const balanceSchema = {
  type: 'object',
  required: ['balance', 'currency', 'billing_mode'],
  properties: {
    balance: { type: 'number' },
    formatted: { type: 'string' },
    currency: { type: 'string' },
    billing_mode: { enum: ['prepaid', 'postpaid'] },
  },
} as const;
export const credentialSchema = {
  type: 'object',
  required: ['account_id'],
  properties: {
    account_id: { type: 'integer' },
    account_name: { type: 'string' },
    key_name: { type: 'string' },
    issuer_user_id: { type: ['integer', 'null'] },
  },
} as const;

export function profileOf(rc: RequestContext) {
  return {
    id: rc.account.id,
    uid: rc.account.uid,
    name: rc.account.name,
    status: rc.account.status,
    created_at: new Date(rc.account.created_at).toISOString(),
  };
}

export function balanceOf(rc: RequestContext) {
  const amount = Number(rc.account.wallet_balance);
  return {
    balance: amount,
    formatted: `${amount.toFixed(2)} ${rc.account.currency}`,
    currency: rc.account.currency,
    billing_mode: rc.account.billing_mode,
  };
}

/** The credential behind the request: a key's name and issuer; for other actors what stands in their place. */
export function credentialOf(rc: RequestContext) {
  const a = rc.actor;
  const key = a.kind === 'api_key' || a.kind === 'mcp_credential' ? a.key : null;
  return {
    account_id: rc.account.id,
    account_name: rc.account.name,
    key_name: key?.name ?? a.kind,
    issuer_user_id: key ? key.user_id : a.kind === 'oauth_client' ? a.issuer.id : null,
  };
}
