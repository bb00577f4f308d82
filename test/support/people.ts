import crypto from 'node:crypto';
import { admin, newTenant, type Tenant } from './stack.js';

export interface SignedPerson extends Tenant {
  email: string;
  password: string;
}

/** A fresh account whose user can sign in on the authorization server's pages (a password the operator set). */
export async function personWithPassword(opts: { permissions?: string[]; name?: string } = {}): Promise<SignedPerson> {
  const t = await newTenant(opts);
  const users = await admin('GET', `/accounts/${t.accountId}/users`);
  const email = (users.body.data as { id: number; email: string }[]).find((u) => u.id === t.userId)!.email;
  const password = `pw ${crypto.randomBytes(12).toString('base64url')} long`;
  const set = await admin('PUT', `/accounts/${t.accountId}/users/${t.userId}/password`, { password });
  if (set.status !== 200) throw new Error(`password set failed: ${set.status} ${set.text}`);
  return { ...t, email, password };
}
