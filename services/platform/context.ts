import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import type { Row } from '../../entities/database.js';

/** The account a request acts for, as its columns are declared (entities/account.ts). */
export type AccountRow = Pick<
  Row<'account', 'accounts'>,
  'id' | 'uid' | 'name' | 'status' | 'wallet_balance' | 'currency' | 'billing_mode' | 'created_at'
>;
/** The credential a request came with. */
export type KeyRow = Pick<Row<'account', 'api_keys'>, 'id' | 'kind' | 'name' | 'user_id' | 'expires_at' | 'revoked_at'>;
/** The person who issued it, whose current permissions apply. */
export type UserRow = Pick<Row<'account', 'users'>, 'id' | 'active' | 'permissions'>;

/**
 * Who acts. A credential's actor carries the credential and its issuer (whose current permissions
 * apply); work started by the service itself (workflows, schedules, operation runs, later agent
 * runs) acts as the system, named by the process, never as a made-up key.
 */
export type Actor =
  | { kind: 'api_key'; key: KeyRow; issuer: UserRow | null }
  | { kind: 'mcp_credential'; key: KeyRow; issuer: UserRow | null }
  | { kind: 'oauth_client'; clientId: string; issuer: UserRow }
  | { kind: 'operator' }
  | { kind: 'system'; process: string };

/** Who is asking and on whose behalf: the first argument of every service call. */
export interface RequestContext {
  account: AccountRow;
  actor: Actor;
  em: EntityManager;
  log: Logger;
  /** The request's authentication, still to be made by its write's own statement (see Admission). */
  admission?: Admission;
}

/** What a write's own statement says about the request's admission (services/account/credentials.ts admissionSql). */
export interface AdmissionRow {
  /** The key was admitted as the principal named: the request is counted in its window. */
  adm_matched: boolean;
  adm_count: number | string | null;
  adm_previous: number | string | null;
  adm_touch_due: boolean | null;
  adm_key_id: number | null;
}

/**
 * A request acting as the principal its credential named last time, whose authentication (and its
 * count in the key's window) is made by the one statement that also makes its write: one round trip
 * where there were two. A service that supports it, while `pending`, puts `sql` first in that
 * statement (CTEs), writes only when the CTE `ok` has a row, returns the CTE `adm`'s columns and
 * hands them to `settle` before anything else: settle throws the refusal (429, or a changed
 * credential for the door to authenticate afresh), after which nothing of the write exists. A
 * statement that failed made no admission (its count rolled back with it); the door then
 * authenticates as usual. Until settled the service only reads, and nothing it read leaves the
 * process unless the admission is made. The statement decides its own commit (the count needs no
 * flush). The principal's wallet balance may be older than the request (its digest leaves the
 * balance out): such a write reads the balance from the row, in its statement. A read gains from
 * it only when its statement is planned once per connection (a named statement: a payments page by
 * subject_id); planned per request, the credential lookup's planning cost more than its own round
 * trip (measured, docs/benchmarks.md). A read that makes it reads nothing unless `ok` has a row.
 */
export interface Admission {
  readonly pending: boolean;
  sql(): { sql: string; params: unknown[] };
  settle(row: AdmissionRow): void;
}

/**
 * The operator ("Settings"): acts on any account it names, authenticated by the operator token and
 * never by an account key. The first argument of every operator service call.
 */
export interface OperatorContext {
  actor: Extract<Actor, { kind: 'operator' }>;
  em: EntityManager;
  log: Logger;
}

/** For logs and audit columns: `api_key:12`, `system:operation-run`. */
export function actorLabel(actor: Actor): string {
  switch (actor.kind) {
    case 'api_key':
    case 'mcp_credential':
      return `${actor.kind}:${actor.key.id}`;
    case 'oauth_client':
      return `oauth_client:${actor.clientId}`;
    case 'operator':
      return 'operator';
    case 'system':
      return `system:${actor.process}`;
  }
}
