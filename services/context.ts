import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../logger.js';

export interface AccountRow { id: number; uid: string; name: string; status: string; wallet_balance: string; currency: string; billing_mode: string; created_at: Date }
export interface KeyRow { id: number; kind: 'rest' | 'mcp'; name: string; user_id: number | null; expires_at: Date | null; revoked_at: Date | null }
export interface UserRow { id: number; active: boolean; permissions: string[] }

/** Who is asking and on whose behalf: the first argument of every service call. */
export interface RequestContext {
  account: AccountRow;
  key: KeyRow;
  user: UserRow | null;
  em: EntityManager;
  log: Logger;
}
