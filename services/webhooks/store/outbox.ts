import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../../entities/db.js';
import { tablesOf, type Row } from '../../../entities/database.js';

// The communication-event outbox (`events`) and the relay's move of its rows into queued deliveries.

const db = (em: EntityManager) => tablesOf(em, 'webhooks');

export type EventRecord = Row<'webhooks', 'events'>;

/**
 * The message fields of a message event (messageEventFields), in the order a compact payload holds
 * them. A status move's event stores only these values, as a JSON array: the event's own fields
 * (event_id, event, occurred_at, account_id) are the row's columns already, and the field names
 * would be most of the row. Two events are written per message sent, so this halves the outbox's
 * share of the write-ahead log (docs/benchmarks.md "Cost per message"). Every read goes through
 * eventPayloadSql, which answers the same object the payload used to hold.
 */
const COMPACT_MESSAGE_FIELDS = [
  'message_id',
  'uid',
  'status',
  'direction',
  'channel_type',
  'sender',
  'recipient',
  'gateway_message_id',
  'error_message',
] as const;

/**
 * A message's delivery progress (sent, delivered, read): stored as an event only when an active
 * endpoint subscribes to it as it happens. Unheard, such a row would only ever be read by the
 * operator's event log (a later endpoint does not get earlier events, and the contract's
 * reconciliation is polling the message), and the message row records the same progress (its
 * status, sent_at, delivered_at, read_at), as Twilio's message resource does without a status
 * callback. They were two of every message's rows: on the 100,000-message campaign this halves the
 * write-ahead log (docs/benchmarks.md "Cost per message"). Failures and inbound messages stay
 * recorded, heard or not.
 */
const UNRECORDED_WHEN_UNHEARD = ['message.sent', 'message.delivered', 'message.read'] as const;

/**
 * The outbox rows of moved messages, for a message statement to embed: `source` names a row set
 * carrying ev, account_id, kind, at and the message's fields (rows with no kind add nothing, nor
 * do progress events nobody hears).
 */
export const messageEventsInsertSql = (
  source: string,
) => `insert into events (event_id, account_id, kind, payload, occurred_at, dispatched_at)
  select ${source}.ev, ${source}.account_id, ${source}.kind,
         jsonb_build_array(${source}.id, ${source}.uid, ${source}.status, ${source}.direction, ${source}.channel_type,
                           ${source}.sender, ${source}.recipient, ${source}.gateway_message_id, ${source}.error_message),
         ${source}.at::timestamptz, ${settledUnless('h.heard')}
    from ${source} cross join lateral (select ${heard(`${source}.account_id`, `${source}.kind`)} as heard) h
   where ${source}.kind is not null
     and (h.heard or ${source}.kind not in (${UNRECORDED_WHEN_UNHEARD.map((k) => `'${k}'`).join(', ')}))`;

/**
 * An event's payload as receivers get it, from the row `e`: a compact message payload (a JSON array)
 * is given its names back, with the row's own fields; any other payload is stored whole.
 */
export const eventPayloadSql = (e: string) => `case when jsonb_typeof(${e}.payload) = 'array' then
      jsonb_build_object('event_id', ${e}.event_id, 'event', ${e}.kind,
        'occurred_at', to_char(${e}.occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'account_id', ${e}.account_id,
        ${COMPACT_MESSAGE_FIELDS.map((f, i) => `'${f}', ${e}.payload->${i}`).join(', ')})
    else ${e}.payload end`;

/** SQL true when an active endpoint of `account` subscribes to `kind` now. */
function heard(account: string, kind: string) {
  return `exists (
    select 1 from webhook_endpoints w cross join lateral jsonb_array_elements_text(w.events) f
     where w.account_id = ${account} and w.status = 'active'
       and (f = '*' or f = ${kind} or (right(f, 2) = '.*' and starts_with(${kind}, left(f, -1)))))`;
}

/**
 * SQL for an event's `dispatched_at` when it is recorded: null (the relay must look at it) when an
 * active endpoint of the account subscribes to the kind, else now(): nobody listens, so the event
 * is recorded already settled and the relay never reads or marks it. Like Stripe's endpoints, an
 * endpoint receives the events that occur after it is active; one that becomes active in the same
 * instant as the event may or may not.
 */
const dispatchedAtOnRecord = (account: string, kind: string) => settledUnless(heard(account, kind));

/** An event's `dispatched_at` on record: null (for the relay) when `heardSql` holds, else now() (settled). */
function settledUnless(heardSql: string) {
  return `case when ${heardSql} then null else now() end`;
}

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
  return many<Pick<EventRecord, 'payload' | 'dispatched_at'>>(
    em,
    `select ${eventPayloadSql('e')} as payload, e.dispatched_at from events e
      where e.account_id = ?${q.kind ? ' and e.kind = ?' : ''} order by e.id desc limit ?`,
    q.kind ? [accountId, q.kind, q.limit] : [accountId, q.limit],
  );
}

export const eventKind = async (em: EntityManager, accountId: number, eventId: string) =>
  (await db(em).selectFrom('events').select('kind').where('event_id', '=', eventId).where('account_id', '=', accountId).executeTakeFirst())
    ?.kind ?? null;

export const eventPayload = async (em: EntityManager, accountId: number, eventId: string) =>
  (
    await one<Pick<EventRecord, 'payload'>>(
      em,
      `select ${eventPayloadSql('e')} as payload from events e where e.event_id = ? and e.account_id = ?`,
      [eventId, accountId],
    )
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
