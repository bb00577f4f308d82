import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { searchColumns } from '../../domain/data/expressions.js';
import { startOptions } from '../../temporal/starters.js';
import type { IndexRequest } from '../../workflows/data/column-index.js';
import {
  askColumnIndexDrop,
  askSearchIndex,
  owedColumnIndexes,
  owedSearchIndexes,
  searchIndexState,
  searchableColumns,
} from './store/indexes.js';
import {
  SEARCH_TARGET,
  dataIndexStarter,
  dataIndexTaskQueue,
  dataIndexWorkflowId,
  type DataIndexKey,
} from '../../workflows/data/column-index.starter.js';

// Index requests (issue 14 point 7): the definition writer (services/data/{table,column,group}-definitions.ts) marks a
// column's index_status pending (or dropping) in its transaction and calls requestColumnIndex after
// the commit; the index workflow (workflows/data/column-index.ts) does the rest. A request that
// cannot reach Temporal is logged and left to the reconciler (requestOwedIndexes), which asks again
// for every row left pending or dropping: asking twice is harmless, the workflow keeps the last wish.

interface IndexCtx {
  em: EntityManager;
  log: Logger;
}
interface IndexDeps {
  config: Config;
  temporal: Client;
}

async function signalIndex(ctx: IndexCtx, deps: IndexDeps, key: DataIndexKey, request: IndexRequest): Promise<boolean> {
  const indexTaskQueue = dataIndexTaskQueue(deps.config);
  try {
    await deps.temporal.workflow.signalWithStart('dataIndexWorkflow', {
      ...startOptions(deps.config, dataIndexStarter, key, [
        { accountId: key.accountId, tableId: key.tableId, target: key.target, indexTaskQueue },
      ]),
      signal: dataIndexStarter.signals!.indexWanted,
      signalArgs: [request],
    });
    return true;
  } catch (err) {
    ctx.log.warn(
      { err, workflowId: dataIndexWorkflowId(key.accountId, key.tableId, key.target), request },
      'index request not delivered; the reconciler will ask again',
    );
    return false;
  }
}

/** Asks the column's index workflow to build (or drop) its index; the column row already says pending (or dropping). */
export async function requestColumnIndex(
  ctx: IndexCtx,
  deps: IndexDeps,
  column: { accountId: number; tableId: string; columnId: string; key: string },
  want: 'build' | 'drop',
): Promise<void> {
  // A drop asked for just before the column (or table) is deleted: the row must say dropping, or
  // the workflow, finding it still ready, would take the request for one overtaken by a rebuild.
  if (want === 'drop') await askColumnIndexDrop(ctx.em, column.columnId);
  await signalIndex(
    ctx,
    deps,
    { accountId: column.accountId, tableId: column.tableId, target: column.key },
    { kind: 'column', want, columnId: column.columnId },
  );
}

/**
 * Brings the table's search index in line with its searchable columns (the first six text,
 * long_text, phone and email columns): marks it pending when they differ from what the index
 * covers (dropping when there are none left, or the table is gone) and asks the workflow to follow.
 * Call it after any commit that adds, removes, reorders or retypes columns, or deletes the table.
 */
export async function requestSearchIndex(ctx: IndexCtx, deps: IndexDeps, table: { accountId: number; tableId: string }): Promise<void> {
  const row = await searchIndexState(ctx.em, table.accountId, table.tableId);
  if (row) {
    const columns = await searchableColumns(ctx.em, table.tableId);
    const want = searchColumns(columns);
    const covered = row.search_index_columns ?? [];
    const same = want.length === covered.length && want.every((k, i) => k === covered[i]);
    if (!want.length && row.search_index_status === null) return;
    if (want.length && same && (row.search_index_status === 'ready' || row.search_index_status === 'building')) return;
    const status = want.length ? 'pending' : 'dropping';
    await askSearchIndex(ctx.em, table.tableId, status);
  }
  await signalIndex(ctx, deps, { accountId: table.accountId, tableId: table.tableId, target: SEARCH_TARGET }, { kind: 'search' });
}

/**
 * One reconciler pass: asks again for the indexes left pending or dropping for a while (a request
 * lost between the commit and Temporal, or a workflow that ended early). Answers how many it asked for.
 */
export async function requestOwedIndexes(em: EntityManager, deps: IndexDeps & { log: Logger }, olderThanSeconds = 30): Promise<number> {
  const ctx = { em, log: deps.log };
  const columns = await owedColumnIndexes(em, olderThanSeconds);
  for (const c of columns) {
    await requestColumnIndex(
      ctx,
      deps,
      { accountId: c.account_id, tableId: c.table_id, columnId: c.id, key: c.key },
      c.index_status === 'pending' ? 'build' : 'drop',
    );
  }
  const tables = await owedSearchIndexes(em, olderThanSeconds);
  for (const t of tables) {
    await signalIndex(ctx, deps, { accountId: t.account_id, tableId: t.id, target: SEARCH_TARGET }, { kind: 'search' });
  }
  return columns.length + tables.length;
}
