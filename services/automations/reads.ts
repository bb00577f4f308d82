import { many, one } from '../../entities/db.js';
import { notFound } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { businessEnvelope, type BusinessEventRow } from './business-events.js';
import { subscriptionView, scheduleView } from './settings.js';
import { runView, type RunRow } from './operations.js';

// What an account may read of its automations (automations.view). The contract names these reads
// but leaves their paths and fields open.
export const LIST_CAP = 100;

/** The business-event log, newest first, paged backward from `before` (an unknown one restarts at the newest page). */
export async function listBusinessEvents(rc: RequestContext, q: { before?: string; limit: number; type?: string }) {
  const cursor = q.before
    ? await one<{ seq: string }>(rc.em, 'select seq from business_events where id = ? and account_id = ?', [q.before, rc.account.id])
    : null;
  const rows = await many<BusinessEventRow & { seq: string }>(
    rc.em,
    `select * from business_events where account_id = ? ${cursor ? 'and seq < ?' : ''} ${q.type ? 'and type = ?' : ''} order by seq desc limit ?`,
    [rc.account.id, ...(cursor ? [cursor.seq] : []), ...(q.type ? [q.type] : []), q.limit + 1],
  );
  const page = rows.slice(0, q.limit);
  const hasMore = rows.length > q.limit;
  return { events: page.map(businessEnvelope), next_before: hasMore ? page[page.length - 1].id : null, has_more: hasMore };
}

export async function listSubscriptions(rc: RequestContext) {
  return (
    await many<Record<string, unknown>>(rc.em, 'select * from automation_subscriptions where account_id = ? order by id limit ?', [
      rc.account.id,
      LIST_CAP,
    ])
  ).map(subscriptionView);
}

export async function listSchedules(rc: RequestContext) {
  return (
    await many<Record<string, unknown>>(rc.em, 'select * from automation_schedules where account_id = ? order by created_at, id limit ?', [
      rc.account.id,
      LIST_CAP,
    ])
  ).map(scheduleView);
}

export async function getOperationRun(rc: RequestContext, ref: string) {
  const row = /^[0-9a-f-]{36}$/i.test(ref)
    ? await one<RunRow>(rc.em, 'select * from operation_runs where id = ? and account_id = ?', [ref, rc.account.id])
    : null;
  if (!row) throw notFound('Run');
  return runView(row);
}
