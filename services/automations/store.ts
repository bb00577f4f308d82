import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../entities/db.js';
import { tablesOf, type Row } from '../../entities/database.js';

// The automations family's statements: business_events, automation_subscriptions,
// operation_definitions, operation_runs, automation_schedules. The only module that names these
// tables; webhooks reach the business-event outbox and the subscriptions through index.ts.

const db = (em: EntityManager) => tablesOf(em, 'automations');

export type BusinessEventRecord = Row<'automations', 'business_events'>;
export type SubscriptionRecord = Row<'automations', 'automation_subscriptions'>;
export type OperationRecord = Row<'automations', 'operation_definitions'>;
export type RunRecord = Row<'automations', 'operation_runs'>;
export type ScheduleRecord = Row<'automations', 'automation_schedules'>;

/** What an envelope shows of a business event (businessEnvelope). */
const EVENT_COLUMNS = ['id', 'account_id', 'type', 'data', 'live', 'source', 'occurred_at'] as const;
/** What a subscription's view shows: never its secret. */
const SUBSCRIPTION_COLUMNS = ['id', 'event_type', 'target_url', 'description', 'active', 'created_at'] as const;
const OPERATION_COLUMNS = ['id', 'name', 'kind', 'config', 'description', 'active', 'created_at', 'updated_at'] as const;
const RUN_COLUMNS = ['id', 'operation_name', 'status', 'source', 'input', 'result', 'error', 'created_at', 'finished_at'] as const;
const SCHEDULE_COLUMNS = ['id', 'name', 'operation_name', 'input', 'every_seconds', 'active', 'created_at'] as const;

/** A json column's value as the statement sends it (text, as the statements always sent it). */
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

// Business events

export const insertBusinessEvent = (
  tx: EntityManager,
  e: Pick<BusinessEventRecord, 'id' | 'account_id' | 'type' | 'data' | 'live' | 'source'>,
) =>
  exec(tx, 'insert into business_events (id, account_id, type, data, live, source, occurred_at) values (?, ?, ?, ?, ?, ?, now())', [
    e.id,
    e.account_id,
    e.type,
    JSON.stringify(e.data),
    e.live,
    e.source,
  ]);

/** The log position of an account's event; null when the account has no such event. */
export const businessEventSeq = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em).selectFrom('business_events').select('seq').where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst())
    ?.seq ?? null;

/** An account's events before `beforeSeq` (of one type when given), newest first. */
export function businessEventsBefore(em: EntityManager, accountId: number, q: { beforeSeq: string | null; type?: string; limit: number }) {
  let s = db(em).selectFrom('business_events').select(EVENT_COLUMNS).where('account_id', '=', accountId);
  if (q.beforeSeq !== null) s = s.where('seq', '<', q.beforeSeq);
  if (q.type) s = s.where('type', '=', q.type);
  return s.orderBy('seq', 'desc').limit(q.limit).execute();
}

export const businessEventById = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em)
    .selectFrom('business_events')
    .select(EVENT_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

/** The event an operation run already emitted (its `source`), for a retried activity; null when none. */
export const businessEventIdBySource = async (tx: EntityManager, accountId: number, source: string) =>
  (
    await db(tx)
      .selectFrom('business_events')
      .select('id')
      .where('account_id', '=', accountId)
      .where('source', '=', source)
      .executeTakeFirst()
  )?.id ?? null;

/** Claims up to `limit` undispatched events of the outbox, oldest first (SKIP LOCKED: relays share the backlog). */
export const claimUndispatchedBusinessEvents = (tx: EntityManager, limit: number) =>
  many<Pick<BusinessEventRecord, 'id' | 'account_id' | 'type'>>(
    tx,
    'select id, account_id, type from business_events where dispatched_at is null order by seq limit ? for update skip locked',
    [limit],
  );

export const markBusinessEventsDispatched = (tx: EntityManager, ids: readonly string[]) =>
  exec(tx, `update business_events set dispatched_at = now() where id in (${marks(ids.length)})`, [...ids]);

// Subscriptions

/** The active subscriptions of these accounts, for the relay to match events against. */
export const activeSubscriptionsOf = (tx: EntityManager, accountIds: readonly number[]) =>
  many<Pick<SubscriptionRecord, 'id' | 'account_id' | 'event_type'>>(
    tx,
    `select id, account_id, event_type from automation_subscriptions where active and account_id in (${marks(accountIds.length)})`,
    [...accountIds],
  );

/** What a delivery to a subscription needs; null when the account has no such subscription. */
export const subscriptionTarget = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .selectFrom('automation_subscriptions')
    .select(['target_url', 'secret', 'active'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

export const insertSubscription = (
  em: EntityManager,
  s: Pick<SubscriptionRecord, 'account_id' | 'event_type' | 'target_url' | 'secret' | 'description'>,
) =>
  db(em)
    .insertInto('automation_subscriptions')
    .values({ ...s, active: true, created_at: sql`now()` })
    .returning(SUBSCRIPTION_COLUMNS)
    .executeTakeFirstOrThrow();

/** An account's subscriptions by id (at most `limit` when given). */
export function subscriptionsOf(em: EntityManager, accountId: number, limit?: number) {
  const s = db(em).selectFrom('automation_subscriptions').select(SUBSCRIPTION_COLUMNS).where('account_id', '=', accountId).orderBy('id');
  return (limit === undefined ? s : s.limit(limit)).execute();
}

export const setSubscriptionActiveRow = async (em: EntityManager, accountId: number, id: number, active: boolean) =>
  (await db(em)
    .updateTable('automation_subscriptions')
    .set({ active })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning(SUBSCRIPTION_COLUMNS)
    .executeTakeFirst()) ?? null;

/** True when the account had the subscription. */
export const deleteSubscriptionRow = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .deleteFrom('automation_subscriptions')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning('id')
    .executeTakeFirst()) !== undefined;

// Operation definitions

/** The account's active operation of that name; null when there is none. */
export const activeOperation = async (em: EntityManager, accountId: number, name: string) =>
  (await db(em)
    .selectFrom('operation_definitions')
    .select(['id', 'kind', 'config'])
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .where('active', '=', true)
    .executeTakeFirst()) ?? null;

/** The account's operation of that name, active or not; null when there is none. */
export const operationNamed = async (em: EntityManager, accountId: number, name: string) =>
  (await db(em)
    .selectFrom('operation_definitions')
    .select(['id', 'kind'])
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst()) ?? null;

export const insertOperation = (em: EntityManager, o: Pick<OperationRecord, 'account_id' | 'name' | 'kind' | 'config' | 'description'>) =>
  db(em)
    .insertInto('operation_definitions')
    .values({ ...o, config: json(o.config), active: true, created_at: sql`now()`, updated_at: sql`now()` })
    .returning(OPERATION_COLUMNS)
    .executeTakeFirstOrThrow();

export const operationsOf = (em: EntityManager, accountId: number) =>
  db(em).selectFrom('operation_definitions').select(OPERATION_COLUMNS).where('account_id', '=', accountId).orderBy('id').execute();

/** True when the account had the operation. */
export const deleteOperationRow = async (em: EntityManager, accountId: number, id: number) =>
  (await db(em)
    .deleteFrom('operation_definitions')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .returning('id')
    .executeTakeFirst()) !== undefined;

// Operation runs

export const insertQueuedRun = (
  em: EntityManager,
  r: Pick<RunRecord, 'id' | 'account_id' | 'operation_id' | 'operation_name' | 'input' | 'source'>,
) =>
  db(em)
    .insertInto('operation_runs')
    .values({ ...r, input: json(r.input), status: 'queued', created_at: sql`now()` })
    .returning(RUN_COLUMNS)
    .executeTakeFirstOrThrow();

/**
 * Records the run as running: a scheduled run is created here, a queued one moves on; a run already
 * running or finished (a retried activity) is left as it is.
 */
export const beginRun = (
  em: EntityManager,
  r: Pick<RunRecord, 'id' | 'account_id' | 'operation_id' | 'operation_name' | 'input' | 'source'>,
) =>
  exec(
    em,
    `insert into operation_runs (id, account_id, operation_id, operation_name, input, status, source, created_at) values (?, ?, ?, ?, ?, 'running', ?, now())
         on conflict (id) do update set status = 'running' where operation_runs.status = 'queued'`,
    [r.id, r.account_id, r.operation_id, r.operation_name, JSON.stringify(r.input), r.source],
  );

export const finishRun = (
  em: EntityManager,
  f: { id: string; status: 'succeeded' | 'failed'; result: Record<string, unknown> | null; error: string | null },
) =>
  exec(em, 'update operation_runs set status = ?, result = ?, error = ?, finished_at = now() where id = ?', [
    f.status,
    f.result ? JSON.stringify(f.result) : null,
    f.error,
    f.id,
  ]);

export const runById = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em)
    .selectFrom('operation_runs')
    .select(RUN_COLUMNS)
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) ?? null;

/** The latest `limit` runs of an account, newest first. */
export const latestRuns = (em: EntityManager, accountId: number, limit: number) =>
  db(em)
    .selectFrom('operation_runs')
    .select(RUN_COLUMNS)
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .limit(limit)
    .execute();

/** Runs still queued 30 seconds after they were recorded: their workflow start may have been lost. */
export const queuedRunsLeftBehind = (em: EntityManager) =>
  many<Pick<RunRecord, 'id' | 'account_id' | 'operation_name' | 'input' | 'source'>>(
    em,
    `select id, account_id, operation_name, input, source from operation_runs where status = 'queued' and created_at < now() - interval '30 seconds' order by created_at limit 100`,
  );

// Schedules

export const insertSchedule = (
  tx: EntityManager,
  s: Pick<ScheduleRecord, 'id' | 'account_id' | 'name' | 'operation_name' | 'input' | 'every_seconds'>,
) =>
  db(tx)
    .insertInto('automation_schedules')
    .values({ ...s, input: json(s.input), active: true, created_at: sql`now()` })
    .returning(SCHEDULE_COLUMNS)
    .executeTakeFirstOrThrow();

/** The account's schedules in the order they were made (at most `limit` when given, then by id among equal times). */
export function schedulesOf(em: EntityManager, accountId: number, limit?: number) {
  const s = db(em).selectFrom('automation_schedules').select(SCHEDULE_COLUMNS).where('account_id', '=', accountId).orderBy('created_at');
  return (limit === undefined ? s : s.orderBy('id').limit(limit)).execute();
}

/** Whether the account has the schedule (`id` compared as text: a malformed id is simply not found). */
export const scheduleExists = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em)
    .selectFrom('automation_schedules')
    .select('id')
    .where(sql<string>`id::text`, '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst()) !== undefined;

export const deleteScheduleRow = (em: EntityManager, id: string) =>
  db(em).deleteFrom('automation_schedules').where('id', '=', id).execute();
