import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';

// The communication-event outbox (`events`) and the relay's move of its rows into queued deliveries.

const db = (em: EntityManager) => tablesOf(em, 'webhooks');

export type EventRecord = Row<'webhooks', 'events'>;

/**
 * SQL for an event's `dispatched_at` when it is recorded: null (the relay must look at it) when an
 * active endpoint of the account subscribes to the kind, else now(): nobody listens, so the event
 * is recorded already settled and the relay never reads or marks it. Like Stripe's endpoints, an
 * endpoint receives the events that occur after it is active; one that becomes active in the same
 * instant as the event may or may not.
 */
/**
 * The outbox rows of moved messages, for a message statement to embed: `source` names a row set
 * carrying ev, account_id, kind, at and the message's fields (rows with no kind add nothing).
 */
export const messageEventsInsertSql = (
  source: string,
) => `insert into events (event_id, account_id, kind, payload, occurred_at, dispatched_at)
  select ${source}.ev, ${source}.account_id, ${source}.kind, jsonb_build_object('event_id', ${source}.ev, 'event', ${source}.kind, 'occurred_at', ${source}.at, 'account_id', ${source}.account_id,
           'message_id', ${source}.id, 'uid', ${source}.uid, 'status', ${source}.status, 'direction', ${source}.direction, 'channel_type', ${source}.channel_type,
           'sender', ${source}.sender, 'recipient', ${source}.recipient, 'gateway_message_id', ${source}.gateway_message_id, 'error_message', ${source}.error_message),
         ${source}.at::timestamptz, ${dispatchedAtOnRecord(`${source}.account_id`, `${source}.kind`)}
    from ${source} where ${source}.kind is not null`;

export const dispatchedAtOnRecord = (account: string, kind: string) => `case when exists (
    select 1 from webhook_endpoints w cross join lateral jsonb_array_elements_text(w.events) f
     where w.account_id = ${account} and w.status = 'active'
       and (f = '*' or f = ${kind} or (right(f, 2) = '.*' and starts_with(${kind}, left(f, -1))))) then null else now() end`;

/** Records one event in the outbox, in the caller's transaction. */
export const insertEvent = (
  tx: EntityManager,
  e: Pick<EventRecord, 'event_id' | 'account_id' | 'kind' | 'payload'> & { occurred_at: Date },
) =>
  exec(
    tx,
    `insert into events (event_id, account_id, kind, payload, occurred_at, dispatched_at)
    select e.id, e.account, e.kind, e.payload, e.at, ${dispatchedAtOnRecord('e.account', 'e.kind')}
      from (select ?::text as id, ?::int as account, ?::text as kind, ?::jsonb as payload, ?::timestamptz as at) e`,
    [e.event_id, e.account_id, e.kind, JSON.stringify(e.payload), e.occurred_at],
  );

/** An account's events (of one kind when given), newest first. */
export function latestEvents(em: EntityManager, accountId: number, q: { kind?: string; limit: number }) {
  let s = db(em).selectFrom('events').select(['payload', 'dispatched_at']).where('account_id', '=', accountId);
  if (q.kind) s = s.where('kind', '=', q.kind);
  return s.orderBy('id', 'desc').limit(q.limit).execute();
}

export const eventKind = async (em: EntityManager, accountId: number, eventId: string) =>
  (await db(em).selectFrom('events').select('kind').where('event_id', '=', eventId).where('account_id', '=', accountId).executeTakeFirst())
    ?.kind ?? null;

export const eventPayload = async (em: EntityManager, accountId: number, eventId: string) =>
  (
    await db(em)
      .selectFrom('events')
      .select('payload')
      .where('event_id', '=', eventId)
      .where('account_id', '=', accountId)
      .executeTakeFirst()
  )?.payload ?? null;

const marks = (n: number) => Array.from({ length: n }, () => '?').join(',');

/** Claims up to `limit` undispatched events, oldest first (SKIP LOCKED: relays share the backlog). */
export const claimUndispatchedEvents = (tx: EntityManager, limit: number) =>
  many<Pick<EventRecord, 'id' | 'event_id' | 'account_id' | 'kind'>>(
    tx,
    'select id, event_id, account_id, kind from events where dispatched_at is null order by id limit ? for update skip locked',
    [limit],
  );

/** The active endpoints of these accounts, for the relay to match events against. */
export const activeEndpointFilters = (tx: EntityManager, accountIds: readonly number[]) =>
  many<Pick<Row<'webhooks', 'webhook_endpoints'>, 'id' | 'account_id' | 'events'>>(
    tx,
    `select id, account_id, events from webhook_endpoints where status = 'active' and account_id in (${marks(accountIds.length)})`,
    [...accountIds],
  );

/** Queues one delivery per (event, endpoint), attempts 0; a delivery already queued under its workflow id is left. */
export const queueDeliveries = (
  tx: EntityManager,
  q: { accountIds: number[]; workflowIds: string[]; eventIds: string[]; endpointIds: number[] },
) =>
  exec(
    tx,
    `insert into webhook_deliveries (account_id, workflow_id, event_id, target_type, target_id, status, attempts, created_at, updated_at)
         select q.account_id, q.workflow_id, q.event_id, 'endpoint', q.endpoint_id, 'pending', 0, now(), now()
           from unnest(?::int[], ?::text[], ?::text[], ?::int[]) as q(account_id, workflow_id, event_id, endpoint_id)
         on conflict (workflow_id) do nothing`,
    [q.accountIds, q.workflowIds, q.eventIds, q.endpointIds],
  );

export const markEventsDispatched = (tx: EntityManager, ids: readonly string[]) =>
  exec(tx, 'update events set dispatched_at = now() where id = any(?::bigint[])', [ids]);
