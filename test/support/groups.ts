import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { admin, newTenant, uniquePhone, type Tenant } from './stack.js';

// What the chat-group tests share: an account with a WhatsApp number whose phone-number id is
// numeric (as the Groups API needs), and keys of users holding fewer permissions.

let numberSeq = Date.now() % 1_000_000;

export interface WaTenant extends Tenant {
  phoneNumberId: string;
  number: string;
}

/** Another WhatsApp number of the account; `prefix` keeps each test file's ids apart. */
export async function addWaNumber(t: Tenant, prefix: string, suffix = '') {
  const phoneNumberId = `${prefix}${t.accountId}${String(++numberSeq).padStart(7, '0')}${suffix}`;
  const number = uniquePhone('2556');
  const r = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(r.status, 201, r.text);
  return { phoneNumberId, number };
}

/** A fresh account with one WhatsApp number. */
export async function waTenant(prefix: string, opts: { permissions?: string[] } = {}): Promise<WaTenant> {
  const t = await newTenant(opts);
  return { ...t, ...(await addWaNumber(t, prefix)) };
}

/** Another key of the same account, issued by a user holding only `permissions`. */
export async function keyWith(t: Tenant, permissions: string[]): Promise<string> {
  const user = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `limited-${crypto.randomUUID()}@example.com`,
    name: 'Limited',
    permissions,
  });
  assert.equal(user.status, 201, user.text);
  const key = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'limited', user_id: user.body.data.id });
  return key.body.data.token;
}
