import type { EntityManager } from '@mikro-orm/postgresql';
import { many, manyPlanned, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import { eventPayloadSql } from './outbox.js';

// Deliveries and their attempts: the dispatcher's claims, the attempt log, the operator's reads.

type Delivery = Row<'webhooks', 'webhook_deliveries'>;
type Attempt = Row<'webhooks', 'delivery_attempts'>;
type Endpoint = Row<'webhooks', 'webhook_endpoints'>;

/** A claimed first attempt with what signing it needs (endpoint and event null when they are gone). */
export type ClaimedDelivery = Pick<Delivery, 'id' | 'account_id' | 'workflow_id' | 'event_id' | 'target_id'> & {
  claimed_until: string;
  url: Endpoint['url'] | null;
  secret: Endpoint['secret'];
  previous_secret: Endpoint['previous_secret'];
  previous_secret_expires_at: Endpoint['previous_secret_expires_at'];
  endpoint_status: Endpoint['status'] | null;
  payload: Row<'webhooks', 'events'>['payload'] | null;
};

/**
 * Claims up to `limit` queued first attempts with a lease, with what signing them needs, in one
 * statement (asked several times a second while deliveries flow: planned once per connection).
 */
export const claimFirstAttempts = (em: EntityManager, limit: number, leaseSeconds: number) =>
  manyPlanned<ClaimedDelivery>(
    em,
    `with picked as (
         select id from webhook_deliveries
          where status = 'pending' and attempts = 0 and target_type = 'endpoint' and (claimed_until is null or claimed_until < now())
          order by id limit ? for update skip locked),
       claimed as (
         update webhook_deliveries d set claimed_until = now() + make_interval(secs => ?)
           from picked where d.id = picked.id
         returning d.id, d.account_id, d.workflow_id, d.event_id, d.target_id, d.claimed_until)
       select c.*, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.status as endpoint_status, ${eventPayloadSql('e')} as payload
         from claimed c
         left join webhook_endpoints w on w.id = c.target_id and w.account_id = c.account_id
         left join events e on e.event_id = c.event_id and e.account_id = c.account_id
        order by c.id`,
    [limit, leaseSeconds],
  );

/** Claimed but not posted: claimable again at once (only while still waiting for a first attempt). */
export const releaseClaims = (em: EntityManager, ids: readonly string[]) =>
  many(em, `update webhook_deliveries set claimed_until = null where id = any(?::bigint[]) and attempts = 0`, [ids]);

/**
 * Successful first attempts, set-based: only rows still waiting for their first attempt move (a
 * row a retry workflow has taken over is that workflow's to log), and each gets its attempt logged.
 */
export const logFirstSuccesses = (
  tx: EntityManager,
  s: { ids: string[]; at: string[]; codes: (number | null)[]; latencies: number[]; excerpts: (string | null)[] },
) =>
  many(
    tx,
    `with s as (select * from unnest(?::bigint[], ?::timestamptz[], ?::int[], ?::int[], ?::text[]) as s(id, at, code, ms, excerpt)),
              done as (update webhook_deliveries d set status = 'succeeded', attempts = 1, last_status_code = s.code, last_error = null,
                              updated_at = now(), completed_at = now(), claimed_until = null
                         from s where d.id = s.id and d.status = 'pending' and d.attempts = 0 returning d.id)
         insert into delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt)
         select s.id, 1, s.at, s.code, s.ms, null, s.excerpt from s join done on done.id = s.id
         on conflict (delivery_id, attempt) do nothing`,
    [s.ids, s.at, s.codes, s.latencies, s.excerpts],
  );

/**
 * The delivery's state after an attempt, made or moved under its workflow id (attempts never go
 * back); `final` sets completed_at. Answers the delivery's id.
 */
export const upsertDelivery = (
  tx: EntityManager,
  d: Pick<Delivery, 'account_id' | 'workflow_id' | 'event_id' | 'target_type' | 'target_id' | 'status' | 'attempts'> & {
    last_status_code: number | null;
    last_error: string | null;
    final: boolean;
  },
) =>
  one<Pick<Delivery, 'id'>>(
    tx,
    `insert into webhook_deliveries (account_id, workflow_id, event_id, target_type, target_id, status, attempts, last_status_code, last_error, created_at, updated_at, completed_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, now(), now(), ${d.final ? 'now()' : 'null'})
       on conflict (workflow_id) do update set status = excluded.status, attempts = greatest(webhook_deliveries.attempts, excluded.attempts),
         last_status_code = excluded.last_status_code, last_error = excluded.last_error, updated_at = now(), completed_at = excluded.completed_at
       returning id`,
    [d.account_id, d.workflow_id, d.event_id, d.target_type, d.target_id, d.status, d.attempts, d.last_status_code, d.last_error],
  );

/** Logs one attempt; false when it was already logged (a retried activity). */
export const logAttempt = async (
  tx: EntityManager,
  a: Pick<Attempt, 'delivery_id' | 'attempt' | 'status_code' | 'latency_ms' | 'error' | 'response_excerpt'> & { attempted_at: string },
) =>
  (await one<Pick<Attempt, 'id'>>(
    tx,
    `insert into delivery_attempts (delivery_id, attempt, attempted_at, status_code, latency_ms, error, response_excerpt) values (?, ?, ?, ?, ?, ?, ?)
       on conflict (delivery_id, attempt) do nothing returning id`,
    [a.delivery_id, a.attempt, a.attempted_at, a.status_code, a.latency_ms, a.error, a.response_excerpt],
  )) !== null;

/** How many deliveries of the event to the endpoint were logged (the first and each redelivery). */
export const deliveriesLogged = async (em: EntityManager, accountId: number, eventId: string, endpointId: number) =>
  Number(
    (await one<{ n: string }>(
      em,
      `select count(*) as n from webhook_deliveries where account_id = ? and event_id = ? and target_type = 'endpoint' and target_id = ?`,
      [accountId, eventId, endpointId],
    ))!.n,
  );

/** An endpoint delivery with its attempts, as the operator reads the log. */
export type DeliveryWithAttempts = Pick<
  Delivery,
  | 'id'
  | 'event_id'
  | 'target_id'
  | 'workflow_id'
  | 'status'
  | 'attempts'
  | 'last_status_code'
  | 'last_error'
  | 'created_at'
  | 'completed_at'
> & { attempt_log: Pick<Attempt, 'attempt' | 'attempted_at' | 'status_code' | 'latency_ms' | 'error' | 'response_excerpt'>[] };

/** An account's endpoint deliveries (filtered as asked), newest first, each with its attempts in order. */
export function deliveriesOf(
  em: EntityManager,
  accountId: number,
  q: { event_id?: string; endpoint_id?: number; status?: string; limit: number },
) {
  const where = [`d.account_id = ?`, `d.target_type = 'endpoint'`];
  const params: unknown[] = [accountId];
  if (q.event_id) {
    where.push('d.event_id = ?');
    params.push(q.event_id);
  }
  if (q.endpoint_id) {
    where.push('d.target_id = ?');
    params.push(q.endpoint_id);
  }
  if (q.status) {
    where.push('d.status = ?');
    params.push(q.status);
  }
  return many<DeliveryWithAttempts>(
    em,
    `select d.id, d.event_id, d.target_id, d.workflow_id, d.status, d.attempts, d.last_status_code, d.last_error, d.created_at, d.completed_at,
            coalesce((select json_agg(json_build_object('attempt', a.attempt, 'attempted_at', a.attempted_at, 'status_code', a.status_code, 'latency_ms', a.latency_ms,
                                                             'error', a.error, 'response_excerpt', a.response_excerpt) order by a.attempt)
                            from delivery_attempts a where a.delivery_id = d.id), '[]') as attempt_log
       from webhook_deliveries d where ${where.join(' and ')} order by d.id desc limit ?`,
    [...params, q.limit],
  );
}
