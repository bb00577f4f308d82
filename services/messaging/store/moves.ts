import type { EntityManager } from '@mikro-orm/postgresql';
import { manyBound } from '../../../entities/db.js';
import type { Row as TableRow } from '../../../entities/database.js';
import { movableFrom, type MessageStatus } from '../../../domain/messaging/message-status.js';
import { MESSAGE_STATUS_EVENTS, messageEventsInsertSql } from '../../webhooks/index.js';
import { newUid } from '../../platform/ids.js';
import { countMessageStatuses } from '../../../observability/metrics.js';
import { providerIdInsertSql } from './messages.js';

// Every status change of a message goes through here. Each call is ONE statement: the guarded update
// and the insert of its callback event are two parts of a data-modifying CTE, so they commit together
// without an explicit transaction (one round trip instead of four on the hot paths: receipts, sends).
// The guard (`status = any(allowed)`) makes concurrent receipts and retries unable to move a status
// backwards; a move that changes nothing emits nothing.

type MessageRecord = TableRow<'messaging', 'messages'>;

export interface Move {
  to: MessageStatus;
  gatewayMessageId?: string | null;
  errorMessage?: string | null;
}

/** How a single move finds its message: a provider receipt knows the uid or only the provider's id. */
export type MessageKey = { id: number } | { uid: string } | { gatewayMessageId: string };

export interface MoveResult {
  id: number;
  uid: string;
  accountId: number;
  dispatchMode: string;
  status: MessageStatus;
  moved: boolean;
}

// workflow_pending: the first move of a workflow-mode message says its workflow started (a no-op,
// and so no obstacle to an update in place, for every other message).
const SET_COLUMNS = `status = v.status, updated_at = now(), workflow_pending = null,
       gateway_message_id = coalesce(v.gid, t.gateway_message_id),
       error_message = coalesce(v.err, t.error_message),
       sent_at = case when v.status in ('sent', 'delivered', 'read') then coalesce(t.sent_at, now()) else t.sent_at end,
       delivered_at = case when v.status in ('delivered', 'read') then coalesce(t.delivered_at, now()) else t.delivered_at end,
       read_at = case when v.status = 'read' then coalesce(t.read_at, now()) else t.read_at end`;

const RETURNING =
  't.id, t.uid, t.account_id, t.status, t.direction, t.channel_type, t.sender, t.recipient, t.gateway_message_id, t.error_message, t.dispatch_mode';

/** The flat message payload (see messageEventFields), built in SQL from the moved row `m` (webhooks' outbox). */
const EVENT_INSERT = messageEventsInsertSql('m');

/**
 * A chat message's provider id, once a move stores it, finds the message from then on (its statuses
 * name it alone). An SMS's receipts name our uid (the status callback's `?m=`), so its id is not
 * entered: a callback naming none of ours is acknowledged, and the silent sweep asks the gateway.
 */
const PROVIDER_ID_INSERT = providerIdInsertSql('m', `m.channel_type <> 'sms'`);

/** The condition that finds message `t` by a key `value` (a placeholder or a column): the provider's id through message_provider_ids. */
const keyed = (column: 'id' | 'uid' | 'gateway_message_id', t: string, value = '?') =>
  column === 'gateway_message_id'
    ? `${t}.id in (select message_id from message_provider_ids where provider_message_id = ${value})`
    : `${t}.${column} = ${value}`;

/** Where a moved (or unmoved) message stands. */
type Row = Pick<MessageRecord, 'id' | 'uid' | 'account_id' | 'dispatch_mode' | 'status'> & { moved: boolean };
const toResult = (r: Row): MoveResult => ({
  id: Number(r.id),
  uid: r.uid,
  accountId: r.account_id,
  dispatchMode: r.dispatch_mode,
  status: r.status,
  moved: r.moved,
});

function moveRow(m: Move) {
  return {
    status: m.to,
    allowed: movableFrom(m.to),
    gid: m.gatewayMessageId ?? null,
    err: m.errorMessage ?? null,
    kind: MESSAGE_STATUS_EVENTS[m.to] ?? null,
    ev: MESSAGE_STATUS_EVENTS[m.to] ? newUid('evt') : null,
    at: new Date().toISOString(),
  };
}

/** The moves as a relation; `key` is the column a move finds its message by (absent for single moves). */
const values = (key = '') =>
  `select * from jsonb_to_recordset(?::jsonb) as v(${key}status text, allowed text[], gid text, err text, kind text, ev text, at text)`;

/**
 * Moves one message forward. Returns where it stands afterwards (moved or not), or null when no
 * message has that key.
 */
export async function moveMessage(em: EntityManager, key: MessageKey, move: Move): Promise<MoveResult | null> {
  const [column, value] =
    'id' in key
      ? (['id', key.id] as const)
      : 'uid' in key
        ? (['uid', key.uid] as const)
        : (['gateway_message_id', key.gatewayMessageId] as const);
  const rows = await manyBound<Row>(
    em,
    `with v as (${values()}),
     m as (update messages t set ${SET_COLUMNS} from v where ${keyed(column, 't')} and t.status = any(v.allowed)
           returning ${RETURNING}, v.ev, v.kind, v.at),
     e as (${EVENT_INSERT}),
     p as (${PROVIDER_ID_INSERT})
     select id, uid, account_id, dispatch_mode, status, true as moved from m
     union all
     select id, uid, account_id, dispatch_mode, status, false from messages x where ${keyed(column, 'x')} and not exists (select 1 from m)
     limit 1`,
    [JSON.stringify([moveRow(move)]), value, value],
  );
  countMessageStatuses(rows.filter((r) => r.moved));
  return rows[0] ? toResult(rows[0]) : null;
}

/**
 * Moves many messages in one statement, each with its own target; returns the ones that moved. All
 * moves of a call find their message the same way (`by`). Several moves of the same message in one
 * call are applied in order, one round each.
 */
export async function moveMessages(em: EntityManager, moves: Array<Move & { id: number }>): Promise<MoveResult[]>;
export async function moveMessages(
  em: EntityManager,
  moves: Array<Move & { key: string }>,
  by: 'uid' | 'gateway_message_id',
): Promise<MoveResult[]>;
export async function moveMessages(
  em: EntityManager,
  moves: Array<Move & { id?: number; key?: string }>,
  by: 'id' | 'uid' | 'gateway_message_id' = 'id',
): Promise<MoveResult[]> {
  const rounds: Array<typeof moves> = [];
  const seen = new Map<unknown, number>();
  for (const m of moves) {
    const k = by === 'id' ? m.id : m.key;
    const round = seen.get(k) ?? 0;
    seen.set(k, round + 1);
    (rounds[round] ??= []).push(m);
  }
  const out: MoveResult[] = [];
  for (const round of rounds) {
    const rows = await manyBound<Row>(
      em,
      `with v as (${values(by === 'id' ? 'key bigint, ' : 'key text, ')}),
       m as (update messages t set ${SET_COLUMNS} from v where ${keyed(by, 't', 'v.key')} and t.status = any(v.allowed)
             returning ${RETURNING}, v.ev, v.kind, v.at),
       e as (${EVENT_INSERT}),
       p as (${PROVIDER_ID_INSERT})
       select id, uid, account_id, dispatch_mode, status, true as moved from m`,
      [JSON.stringify(round.map((m) => ({ key: by === 'id' ? m.id : m.key, ...moveRow(m) })))],
    );
    countMessageStatuses(rows);
    out.push(...rows.map(toResult));
  }
  return out;
}
