import type { KeyRow } from '../platform/context.js';
import type { CredentialRow } from './store.js';

// The credential lookup of every authenticated request (its statements are in store.ts), kept out
// of the doors, which decide what the row means: 401, 403, 429.
export { admissionSql, findCredential, touchKeyLastUsed, type CredentialRow } from './store.js';
export { contextAccount } from './accounts.js';

/** The key as a request context carries it. */
export const contextKey = (row: CredentialRow): KeyRow => ({
  id: row.key_id,
  kind: row.kind,
  name: row.key_name,
  user_id: row.user_id,
  expires_at: row.expires_at,
  revoked_at: row.revoked_at,
});
