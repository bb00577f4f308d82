import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';

const profile = {
  type: 'object', required: ['id', 'name'],
  properties: { id: { type: 'integer' }, uid: { type: 'string' }, name: { type: 'string' }, status: { type: 'string' }, created_at: { type: 'string' } },
};
const balance = {
  type: 'object', required: ['balance', 'currency', 'billing_mode'],
  properties: { balance: { type: 'number' }, formatted: { type: 'string' }, currency: { type: 'string' }, billing_mode: { enum: ['prepaid', 'postpaid'] } },
};

export function accountRoutes(_deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'GET', path: '/api/v3/me', tag: 'Profile', summary: 'The account behind the key', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'Account profile', schema: successOf(profile) },
      handler: async ({ rc }) => ({
        body: { status: 'success', data: { id: rc.account.id, uid: rc.account.uid, name: rc.account.name, status: rc.account.status, created_at: new Date(rc.account.created_at).toISOString() } },
      }),
    },
    {
      method: 'GET', path: '/api/v3/balance', tag: 'Balance', summary: 'Wallet balance, currency and billing mode', auth: 'rest', query: emptyQuery,
      response: { status: 200, description: 'Wallet', schema: successOf(balance) },
      handler: async ({ rc }) => {
        const amount = Number(rc.account.wallet_balance);
        return {
          body: { status: 'success', data: { balance: amount, formatted: `${amount.toFixed(2)} ${rc.account.currency}`, currency: rc.account.currency, billing_mode: rc.account.billing_mode } },
        };
      },
    },
    {
      method: 'GET', path: '/api/v3/_auth', tag: 'Authentication', summary: 'Check a credential', auth: 'rest', query: emptyQuery,
      response: {
        status: 200, description: 'The credential is valid',
        schema: successOf({ type: 'object', required: ['account_id'], properties: { account_id: { type: 'integer' }, account_name: { type: 'string' }, key_name: { type: 'string' }, issuer_user_id: { type: ['integer', 'null'] } } }),
      },
      handler: async ({ rc }) => ({
        body: { status: 'success', data: { account_id: rc.account.id, account_name: rc.account.name, key_name: rc.key.name, issuer_user_id: rc.key.user_id } },
      }),
    },
  ];
}
