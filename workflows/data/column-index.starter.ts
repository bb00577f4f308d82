import type { WorkflowStarter } from '../starter.js';
import type { indexWantedSignal } from './column-index.js';

export interface DataIndexKey {
  accountId: number;
  tableId: string;
  /** The column key, or SEARCH_TARGET for the table's search index. */
  target: string;
}

/** The target name of a table's search (trigram) index; `$` is never part of a column key. */
export const SEARCH_TARGET = '$search';

/** `data-index/<account>/<table>/<column key>`, and `data-index/<account>/<table>/$search`. */
export const dataIndexWorkflowId = (accountId: number, tableId: string, target: string) => `data-index/${accountId}/${tableId}/${target}`;

/**
 * The queue of the index activities, polled by a worker of its own that runs one at a time: a
 * CREATE INDEX CONCURRENTLY waits for every transaction older than its snapshots, other builds
 * included, so builds side by side only wait on each other (notes/commerce-and-data-tables.md §4.7).
 */
export const dataIndexTaskQueue = (config: { taskQueue: string }) => `${config.taskQueue}-data-index`;

/**
 * One workflow per index target, always reached by signal-with-start carrying the wanted state:
 * USE_EXISTING delivers a request to the running workflow (which replaces a waiting request for
 * the same target, or cancels a running build when a drop comes), and ALLOW_DUPLICATE starts a
 * new run once the last one has finished its queue. So build after drop, drop during build and a
 * repeated request are all the same call, and the last wish wins. Update-with-start was not
 * chosen: it would hold the operator's request until a worker answers.
 */
export const dataIndexStarter: WorkflowStarter<
  'dataIndexWorkflow',
  DataIndexKey,
  'taskQueue',
  Record<never, never>,
  { indexWanted: typeof indexWantedSignal }
> = {
  workflowType: 'dataIndexWorkflow',
  taskQueue: 'taskQueue',
  workflowId: (k) => dataIndexWorkflowId(k.accountId, k.tableId, k.target),
  searchAttributes: (k) => ({
    AccountId: String(k.accountId),
    ResourceId: k.tableId,
    ResourceType: k.target === SEARCH_TARGET ? 'data_search_index' : 'data_column_index',
  }),
  workflowIdReusePolicy: 'ALLOW_DUPLICATE',
  workflowIdConflictPolicy: 'USE_EXISTING',
  signals: { indexWanted: 'indexWanted' },
};
