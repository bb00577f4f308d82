import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { ScheduleOverlapPolicy, ScheduleNotFoundError, type Client } from '@temporalio/client';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { assertDestinationAllowed, type DestinationPolicy } from '../platform/destinations.js';
import { requireAccount } from '../account/index.js';
import { validateBody } from '../platform/validation.js';
import { newSecret } from '../platform/secrets.js';
import { OPERATION_KINDS, runView } from './operations.js';
import {
  deleteOperationRow,
  deleteScheduleRow,
  deleteSubscriptionRow,
  insertOperation,
  insertSchedule,
  insertSubscription,
  latestRuns,
  operationNamed,
  operationsOf,
  scheduleExists,
  schedulesOf,
  setSubscriptionActiveRow,
  subscriptionsOf,
  type OperationRecord,
  type ScheduleRecord,
  type SubscriptionRecord,
} from './store.js';
import { automationScheduleId } from '../../temporal/ids.js';
import { scheduleAction } from '../../temporal/starters.js';
import type { OperationRunInput } from '../../workflows/automations/operation-run.js';
import { scheduledOperationRunStarter } from '../../workflows/automations/operation-run.starter.js';
import { iso } from '../platform/time.js';

// Operator side of automations: subscriptions, operation definitions and schedules. API keys can
// read subscriptions and schedules and run operations, never define them.
export const subscriptionView = (
  r: Pick<SubscriptionRecord, 'id' | 'event_type' | 'target_url' | 'description' | 'active' | 'created_at'>,
) => ({
  id: r.id,
  event_type: r.event_type,
  target_url: r.target_url,
  description: r.description,
  active: r.active,
  created_at: iso(r.created_at),
});
export const scheduleView = (
  r: Pick<ScheduleRecord, 'id' | 'name' | 'operation_name' | 'input' | 'every_seconds' | 'active' | 'created_at'>,
) => ({
  id: r.id,
  name: r.name,
  operation: r.operation_name,
  input: r.input,
  every_seconds: r.every_seconds,
  active: r.active,
  created_at: iso(r.created_at),
});
export const operationView = (r: Omit<OperationRecord, 'account_id'>) => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  config: r.config,
  description: r.description,
  active: r.active,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

/** The subscription's X-Svc-Signature secret is shown once, in this answer. */
export async function createSubscription(
  oc: OperatorContext,
  accountId: number,
  b: { event_type: string; target_url: string; description?: string },
  policy: DestinationPolicy,
) {
  await requireAccount(oc, accountId);
  await assertDestinationAllowed(b.target_url, policy, 'target_url');
  const secret = `svcsec_${newSecret(40)}`;
  const row = await insertSubscription(oc.em, {
    account_id: accountId,
    event_type: b.event_type,
    target_url: b.target_url,
    secret,
    description: b.description ?? null,
  });
  return { ...subscriptionView(row), secret };
}

export async function createOperation(
  oc: OperatorContext,
  accountId: number,
  b: { name: string; kind: string; config: Record<string, unknown>; description?: string },
) {
  await requireAccount(oc, accountId);
  const em = oc.em;
  validateBody(OPERATION_KINDS[b.kind].config, b.config);
  if (await operationNamed(em, accountId, b.name)) {
    throw conflict('An operation with this name already exists in the account.');
  }
  const row = await insertOperation(em, {
    account_id: accountId,
    name: b.name,
    // The request schema names only OPERATION_KINDS' kinds, and validateBody above found this one.
    kind: b.kind as OperationRecord['kind'],
    config: b.config,
    description: b.description ?? null,
  });
  return operationView(row);
}

/** A schedule is a row and a Temporal Schedule of the same id; both are made or neither is. */
export async function createSchedule(
  em: EntityManager,
  temporal: Client,
  taskQueue: string,
  accountId: number,
  b: { name: string; operation: string; input?: Record<string, unknown>; every_seconds: number },
) {
  const def = await operationNamed(em, accountId, b.operation);
  if (!def) throw validationFailed({ operation: ['No operation with this name is defined in the account.'] });
  const input = b.input ?? {};
  validateBody(OPERATION_KINDS[def.kind].input, input);
  const id = crypto.randomUUID();
  return em.transactional(async (tx) => {
    const row = await insertSchedule(tx, {
      id,
      account_id: accountId,
      name: b.name,
      operation_name: b.operation,
      input,
      every_seconds: b.every_seconds,
    });
    const args: OperationRunInput = { accountId, operationName: b.operation, input, source: `schedule:${id}` };
    await temporal.schedule.create({
      scheduleId: automationScheduleId(accountId, id),
      spec: { intervals: [{ every: `${b.every_seconds} seconds` }] },
      action: scheduleAction({ taskQueue }, scheduledOperationRunStarter, { accountId, scheduleId: id }, [args]),
      // A missed run is skipped rather than replayed in a burst after an outage.
      policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 minute' },
    });
    return scheduleView(row);
  });
}

export async function deleteSchedule(em: EntityManager, temporal: Client, accountId: number, id: string) {
  if (!(await scheduleExists(em, accountId, id))) throw notFound('Schedule');
  try {
    await temporal.schedule.getHandle(automationScheduleId(accountId, id)).delete();
  } catch (err) {
    if (!(err instanceof ScheduleNotFoundError)) throw err;
  }
  await deleteScheduleRow(em, id);
}

// The operator's reads, changes and removals; every one names the account and finds nothing in another.

export async function listSubscriptionsOf(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await subscriptionsOf(oc.em, accountId)).map(subscriptionView);
}

/** Pause (active false) or resume a subscription. */
export async function setSubscriptionActive(oc: OperatorContext, accountId: number, id: number, active: boolean) {
  await requireAccount(oc, accountId);
  const row = await setSubscriptionActiveRow(oc.em, accountId, id, active);
  if (!row) throw notFound('Subscription');
  return subscriptionView(row);
}

export async function deleteSubscription(oc: OperatorContext, accountId: number, id: number): Promise<{ deleted: true }> {
  await requireAccount(oc, accountId);
  if (!(await deleteSubscriptionRow(oc.em, accountId, id))) throw notFound('Subscription');
  return { deleted: true };
}

export async function listOperations(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await operationsOf(oc.em, accountId)).map(operationView);
}

export async function deleteOperation(oc: OperatorContext, accountId: number, id: number): Promise<{ deleted: true }> {
  await requireAccount(oc, accountId);
  if (!(await deleteOperationRow(oc.em, accountId, id))) throw notFound('Operation');
  return { deleted: true };
}

/** The latest 100 runs, newest first. */
export async function listRuns(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await latestRuns(oc.em, accountId, 100)).map(runView);
}

export async function listSchedulesOf(oc: OperatorContext, accountId: number) {
  await requireAccount(oc, accountId);
  return (await schedulesOf(oc.em, accountId)).map(scheduleView);
}

/** The operator's door to createSchedule: the account must exist. */
export async function addSchedule(
  oc: OperatorContext,
  deps: { temporal: Client; config: { taskQueue: string } },
  accountId: number,
  b: { name: string; operation: string; input?: Record<string, unknown>; every_seconds: number },
) {
  await requireAccount(oc, accountId);
  const schedule = await createSchedule(oc.em, deps.temporal, deps.config.taskQueue, accountId, b);
  oc.log.info({ actor: 'operator', account: accountId, schedule: schedule.id }, 'schedule created');
  return schedule;
}

/** The operator's door to deleteSchedule: the account must exist. */
export async function removeSchedule(
  oc: OperatorContext,
  deps: { temporal: Client },
  accountId: number,
  id: string,
): Promise<{ deleted: true }> {
  await requireAccount(oc, accountId);
  await deleteSchedule(oc.em, deps.temporal, accountId, id);
  oc.log.info({ actor: 'operator', account: accountId, schedule: id }, 'schedule deleted');
  return { deleted: true };
}
