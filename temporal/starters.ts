import {
  WithStartWorkflowOperation,
  type Client,
  type ScheduleOptionsStartWorkflowAction,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { SignalDefinition, UpdateDefinition, Workflow, WorkflowIdConflictPolicy } from '@temporalio/common';
import type * as workflows from '../workflows/index.js';
import type {
  ScheduledWorkflowStarter,
  SignalRef,
  TaskQueueSetting,
  UpdateRef,
  WorkflowArgs,
  WorkflowName,
  WorkflowStarter,
} from '../workflows/starter.js';
import { AccountId, ResourceId, ResourceType } from './search-attributes.js';
import { currentRequestId } from '../observability/request-id.js';

// Applies the typed starters declared beside each workflow (workflows/<family>/*.starter.ts): the
// only way the application starts a workflow. The starter fixes type, id, task queue, search
// attributes, memo and id policies; the caller gives the business key and the workflow's arguments.

/** The config settings naming the task queues a starter may use (a Config satisfies it). */
export type TaskQueues<Q extends TaskQueueSetting = TaskQueueSetting> = Pick<Record<TaskQueueSetting, string>, Q>;

/** A Temporal client and the task queue settings (service deps `{ temporal, config }` fit as they are). */
export interface StarterDeps<Q extends TaskQueueSetting = TaskQueueSetting> {
  temporal: Client;
  config: TaskQueues<Q>;
}

type Fn<N extends WorkflowName> = (typeof workflows)[N];
type StartOptions<N extends WorkflowName> = WorkflowStartOptions<Fn<N>> & { workflowIdConflictPolicy: WorkflowIdConflictPolicy };

function baseOptions<N extends WorkflowName, K, Q extends TaskQueueSetting>(
  config: TaskQueues<Q>,
  starter: ScheduledWorkflowStarter<N, K, Q>,
  key: K,
  args: WorkflowArgs<N>,
) {
  const sa = starter.searchAttributes(key);
  const taskQueue: string = config[starter.taskQueue];
  return {
    taskQueue,
    workflowId: starter.workflowId(key),
    args,
    typedSearchAttributes: [
      { key: AccountId, value: sa.AccountId },
      { key: ResourceId, value: sa.ResourceId },
      { key: ResourceType, value: sa.ResourceType },
    ],
    ...(starter.memo ? { memo: starter.memo(key) } : {}),
  };
}

/** The client options of a start, exactly as `startWorkflow` sends them. */
export function startOptions<N extends WorkflowName, K, Q extends TaskQueueSetting, U extends Record<string, UpdateRef>>(
  config: TaskQueues<Q>,
  starter: WorkflowStarter<N, K, Q, U>,
  key: K,
  args: WorkflowArgs<N>,
): StartOptions<N> {
  const base = baseOptions(config, starter, key, args);
  // The API request that started it, for an operator to follow from a log line to the workflow in
  // the Temporal UI. Not in baseOptions: a schedule's runs were not started by the request that
  // created the schedule.
  const requestId = currentRequestId();
  const memo = requestId === undefined ? base.memo : { ...base.memo, request_id: requestId };
  // WorkflowStartOptions spells `args` as a conditional type TypeScript cannot match to a generic N.
  return {
    ...base,
    ...(memo ? { memo } : {}),
    workflowIdReusePolicy: starter.workflowIdReusePolicy,
    workflowIdConflictPolicy: starter.workflowIdConflictPolicy,
  } as StartOptions<N>;
}

/** Starts the workflow of `key`; a start its id policies refuse throws WorkflowExecutionAlreadyStartedError. */
export async function startWorkflow<N extends WorkflowName, K, Q extends TaskQueueSetting, U extends Record<string, UpdateRef>>(
  deps: StarterDeps<Q>,
  starter: WorkflowStarter<N, K, Q, U>,
  key: K,
  args: WorkflowArgs<N>,
): Promise<WorkflowHandle<Fn<N>>> {
  return deps.temporal.workflow.start<Fn<N>>(starter.workflowType, startOptions(deps.config, starter, key, args));
}

type UpdateResult<D> = D extends UpdateDefinition<infer R, infer _A> ? R : never;
type UpdateArgs<D> = D extends UpdateDefinition<infer _R, infer A> ? A : never;

/**
 * Starts the workflow of `key` (or, as its conflict policy says, joins the running one) and sends it
 * one of the starter's updates in the same call; resolves with the update's result.
 */
export async function executeUpdateWithStart<
  N extends WorkflowName,
  K,
  Q extends TaskQueueSetting,
  U extends Record<string, UpdateRef>,
  P extends keyof U & string,
>(
  deps: StarterDeps<Q>,
  starter: WorkflowStarter<N, K, Q, U>,
  key: K,
  args: WorkflowArgs<N>,
  update: P,
  updateArgs: UpdateArgs<U[P]>,
): Promise<UpdateResult<U[P]>> {
  const name = starter.updates?.[update];
  if (!name) throw new Error(`${starter.workflowType} declares no update ${update}`);
  const startWorkflowOperation = new WithStartWorkflowOperation<Workflow>(
    starter.workflowType,
    startOptions(deps.config, starter, key, args) as WorkflowStartOptions<Workflow> & {
      workflowIdConflictPolicy: WorkflowIdConflictPolicy;
    },
  );
  return deps.temporal.workflow.executeUpdateWithStart<Workflow, UpdateResult<U[P]>, UpdateArgs<U[P]>>(name, {
    args: updateArgs,
    startWorkflowOperation,
  });
}

/** The `action` of a Temporal Schedule that starts the workflow of `key` on every tick. */
export function scheduleAction<N extends WorkflowName, K, Q extends TaskQueueSetting>(
  config: TaskQueues<Q>,
  starter: ScheduledWorkflowStarter<N, K, Q>,
  key: K,
  args: WorkflowArgs<N>,
): ScheduleOptionsStartWorkflowAction<Workflow> {
  return { type: 'startWorkflow', workflowType: starter.workflowType, ...baseOptions(config, starter, key, args) };
}

type SignalArgs<D> = D extends SignalDefinition<infer A> ? A : never;

/**
 * Sends one of the starter's signals to the running workflow `workflowId` (built with the id function
 * exported beside the starter), typed from the signal's definition without importing the workflow.
 */
export async function signalWorkflow<
  N extends WorkflowName,
  K,
  Q extends TaskQueueSetting,
  U extends Record<string, UpdateRef>,
  S extends Record<string, SignalRef>,
  P extends keyof S & string,
>(temporal: Client, starter: WorkflowStarter<N, K, Q, U, S>, workflowId: string, signal: P, ...args: SignalArgs<S[P]>): Promise<void> {
  const name = starter.signals?.[signal];
  if (!name) throw new Error(`${starter.workflowType} declares no signal ${signal}`);
  await temporal.workflow.getHandle(workflowId).signal<SignalArgs<S[P]>>(name, ...args);
}

/**
 * Sends one of the starter's signals to the workflow of `key`, starting it first when none runs
 * (signal-with-start): one call, so a signal never finds the workflow gone between a start and it.
 */
export async function signalWithStart<
  N extends WorkflowName,
  K,
  Q extends TaskQueueSetting,
  U extends Record<string, UpdateRef>,
  S extends Record<string, SignalRef>,
  P extends keyof S & string,
>(
  deps: StarterDeps<Q>,
  starter: WorkflowStarter<N, K, Q, U, S>,
  key: K,
  args: WorkflowArgs<N>,
  signal: P,
  ...signalArgs: SignalArgs<S[P]>
) {
  const name = starter.signals?.[signal];
  if (!name) throw new Error(`${starter.workflowType} declares no signal ${signal}`);
  const { workflowIdConflictPolicy: _conflict, ...options } = startOptions(deps.config, starter, key, args);
  // The start options' `args` is a conditional type TypeScript cannot match to a generic N (as in startOptions).
  type Options = Parameters<Client['workflow']['signalWithStart']>[1];
  return deps.temporal.workflow.signalWithStart(starter.workflowType, { ...options, signal: name, signalArgs } as unknown as Options);
}
