import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';

// Webhook endpoints: the operator's settings and the failure counts deliveries keep on them.

const db = (em: EntityManager) => tablesOf(em, 'webhooks');

export type EndpointRecord = Row<'webhooks', 'webhook_endpoints'>;

/** What an endpoint's view shows (its secret only as a hint): every column but the previous secret. */
const ENDPOINT_COLUMNS = [
  'id',
  'account_id',
  'url',
  'description',
  'events',
  'secret',
  'status',
  'previous_secret_expires_at',
  'consecutive_failures',
  'failing_since',
  'disabled_reason',
  'disabled_at',
  'created_at',
  'updated_at',
] as const;
export type EndpointView = Pick<EndpointRecord, (typeof ENDPOINT_COLUMNS)[number]>;

const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export const insertEndpoint = (em: EntityManager, e: Pick<EndpointRecord, 'account_id' | 'url' | 'description' | 'events' | 'secret'>) =>
  db(em)
    .insertInto('webhook_endpoints')
    .values({
      ...e,
      events: json(e.events),
      status: 'active',
      consecutive_failures: 0,
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirstOrThrow();

export const endpointsOf = (em: EntityManager, accountId: number) =>
  db(em).selectFrom('webhook_endpoints').select(ENDPOINT_COLUMNS).where('account_id', '=', accountId).orderBy('id').execute();

/** The account's active endpoints, for a redelivery to match an event against. */
export const activeEndpointsOf = (em: EntityManager, accountId: number) =>
  db(em)
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .execute();

export const endpointById = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

/** True when the account had the endpoint. */
export const deleteEndpointRow = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .deleteFrom('webhook_endpoints')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning('id')
    .executeTakeFirst()) !== undefined;

/**
 * Changes what is given (undefined is left alone). Enabling clears the failure history; disabling
 * keeps an earlier reason and time. Null when the account has no such endpoint.
 */
export async function updateEndpointRow(
  em: EntityManager,
  accountId: number,
  id: number,
  b: { url?: string; events?: readonly string[]; description?: string | null; status?: 'active' | 'disabled' },
) {
  const status =
    b.status === 'active'
      ? { status: 'active' as const, consecutive_failures: 0, failing_since: null, disabled_reason: null, disabled_at: null }
      : b.status === 'disabled'
        ? {
            status: 'disabled' as const,
            disabled_reason: sql<string>`coalesce(disabled_reason, 'Disabled by the operator.')`,
            disabled_at: sql<string>`coalesce(disabled_at, now())`,
          }
        : {};
  return (
    (await db(em)
      .updateTable('webhook_endpoints')
      .set({
        url: b.url,
        events: b.events === undefined ? undefined : json([...b.events]),
        description: b.description,
        ...status,
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .returning(ENDPOINT_COLUMNS)
      .executeTakeFirst()) ?? null
  );
}

/** A new current secret; the old one keeps signing until `overlapHours` from now (none when 0). */
export function rotateEndpointSecret(em: EntityManager, accountId: number, id: number, secret: string, overlapHours: number) {
  // Typed casts: compared with the literal 0, an untyped parameter was read as an integer, and any
  // fractional overlap (0.5 hours) was a 500.
  const keepsOld = overlapHours > 0;
  return one<EndpointView>(
    em,
    `update webhook_endpoints set previous_secret = case when ?::boolean then secret else null end, previous_secret_expires_at = case when ?::boolean then now() + make_interval(secs => ?::float8) else null end,
            secret = ?, updated_at = now() where id = ? and account_id = ? returning ${ENDPOINT_COLUMNS.join(', ')}`,
    [keepsOld, keepsOld, overlapHours * 3600, secret, id, accountId],
  );
}

/** What signing a delivery to the endpoint needs; null when the account has no such endpoint. */
export const endpointSigning = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .selectFrom('webhook_endpoints')
    .select(['url', 'secret', 'previous_secret', 'previous_secret_expires_at', 'status'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

/** One success resets the failure count of these endpoints (those that have one). */
export const clearEndpointFailures = (tx: EntityManager, endpointIds: readonly number[]) =>
  many(
    tx,
    `update webhook_endpoints set consecutive_failures = 0, failing_since = null
          where id = any(?::int[]) and (consecutive_failures > 0 or failing_since is not null)`,
    [endpointIds],
  );

/** The same for one endpoint, as an attempt of a retry workflow logs its success. */
export const clearEndpointFailure = (tx: EntityManager, endpointId: number) =>
  many(
    tx,
    'update webhook_endpoints set consecutive_failures = 0, failing_since = null where id = ? and (consecutive_failures > 0 or failing_since is not null)',
    [endpointId],
  );

/**
 * A failed attempt counted against the endpoint (failing since its time; one more failed delivery
 * when `final`): the count after it and how many hours it has been failing. Null when it is gone.
 */
export const countEndpointFailure = (tx: EntityManager, endpointId: number, attemptedAt: string, final: boolean) =>
  one<Pick<EndpointRecord, 'consecutive_failures'> & { failing_hours: string | number }>(
    tx,
    `update webhook_endpoints set failing_since = coalesce(failing_since, ?), consecutive_failures = consecutive_failures + ?, updated_at = now()
      where id = ? returning consecutive_failures, extract(epoch from now() - failing_since) / 3600 as failing_hours`,
    [attemptedAt, final ? 1 : 0, endpointId],
  );

/** Disables an active endpoint for `reason`: its url when it was active, else null. */
export const disableEndpoint = async (tx: EntityManager, endpointId: number, reason: string) =>
  (
    await many<Pick<EndpointRecord, 'id' | 'url'>>(
      tx,
      `update webhook_endpoints set status = 'disabled', disabled_reason = ?, disabled_at = now() where id = ? and status = 'active' returning id, url`,
      [reason, endpointId],
    )
  )[0] ?? null;
