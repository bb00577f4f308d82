import type { ScheduledWorkflowStarter } from '../starter.js';

export interface OccasionKey {
  accountId: number;
  /** The occasion's key (birthday, christmas-day, a custom one). */
  key: string;
}

/**
 * `occasion/<account>/<key>`: the Temporal Schedule of one occasion of one account, and the id of
 * the workflows it starts, to which Temporal appends each action's time
 * (`occasion/12/birthday-2026-03-01T06:00:00Z`): the day is in every run's id.
 */
export const occasionWorkflowId = (accountId: number, key: string) => `occasion/${accountId}/${key}`;

/**
 * The action of an occasion's schedule. The id policies of a start do not apply to a schedule's
 * actions; the day's exactly-once is the campaign's business key (`occasion:<key>:<day>`, unique per
 * account in PostgreSQL), so a second run of one day (a manual trigger, an overlap allowed by
 * hand) finds the day's campaign and sends nothing (docs/occasions.md).
 */
export const scheduledOccasionStarter: ScheduledWorkflowStarter<'occasionWorkflow', OccasionKey> = {
  workflowType: 'occasionWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => occasionWorkflowId(k.accountId, k.key),
  searchAttributes: (k) => ({ AccountId: String(k.accountId), ResourceId: k.key, ResourceType: 'occasion' }),
};
