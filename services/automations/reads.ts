import { notFound } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { businessEnvelope } from './business-events.js';
import { subscriptionView, scheduleView } from './settings.js';
import { runView } from './operations.js';
import { businessEventSeq, businessEventsBefore, runById, schedulesOf, subscriptionsOf } from './store.js';

// What an account may read of its automations (automations.view). The contract names these reads
// but leaves their paths and fields open.
export const LIST_CAP = 100;

/** The business-event log, newest first, paged backward from `before` (an unknown one restarts at the newest page). */
export async function listBusinessEvents(rc: RequestContext, q: { before?: string; limit: number; type?: string }) {
  const beforeSeq = q.before ? await businessEventSeq(rc.em, rc.account.id, q.before) : null;
  const rows = await businessEventsBefore(rc.em, rc.account.id, { beforeSeq, type: q.type, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  const hasMore = rows.length > q.limit;
  return { events: page.map(businessEnvelope), next_before: hasMore ? page[page.length - 1].id : null, has_more: hasMore };
}

export async function listSubscriptions(rc: RequestContext) {
  return (await subscriptionsOf(rc.em, rc.account.id, LIST_CAP)).map(subscriptionView);
}

export async function listSchedules(rc: RequestContext) {
  return (await schedulesOf(rc.em, rc.account.id, LIST_CAP)).map(scheduleView);
}

export async function getOperationRun(rc: RequestContext, ref: string) {
  const row = /^[0-9a-f-]{36}$/i.test(ref) ? await runById(rc.em, rc.account.id, ref) : null;
  if (!row) throw notFound('Run');
  return runView(row);
}
