import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { OperatorContext } from '../platform/context.js';
import { requestColumnIndex, requestSearchIndex } from './indexes.js';
import type { DefinitionColumn } from './definition-rows.js';
import { markColumnsDropping } from './store/indexes.js';

// Index builds and drops a definition change needs, asked for only after its transaction commits
// (the index workflow reads the committed column).

export interface DefinitionDeps {
  config: Config;
  temporal: Client;
}

export interface IndexWork {
  build: DefinitionColumn[];
  drop: DefinitionColumn[];
  search: boolean;
}

/** Asks the index workflow for builds and the search index once the definition is committed; a failed ask leaves the column pending. */
export async function requestIndexes(oc: OperatorContext, deps: DefinitionDeps, accountId: number, tableId: string, work: IndexWork) {
  const ctx = { em: oc.em, log: oc.log };
  for (const [want, list] of [
    ['build', work.build],
    ['drop', work.drop],
  ] as const)
    for (const c of list)
      await requestColumnIndex(ctx, deps, { accountId, tableId, columnId: c.id, key: c.key }, want).catch((err: unknown) =>
        oc.log.error({ err, table: tableId, column: c.id, want }, 'column index request failed; the column stays as marked'),
      );
  if (work.search)
    await requestSearchIndex(ctx, deps, { accountId, tableId }).catch((err: unknown) =>
      oc.log.error({ err, table: tableId }, 'search index request failed'),
    );
}

/**
 * Before columns go: marks their indexes dropping (the index activity drops only an index its row
 * says is dropping, or whose row is gone) and asks for the drops. The workflow drops by name (from
 * the column id), so the rows may be deleted right after, whichever of the two happens first.
 */
export async function askDrops(oc: OperatorContext, deps: DefinitionDeps, accountId: number, tableId: string, columns: DefinitionColumn[]) {
  if (!columns.length) return;
  await markColumnsDropping(
    oc.em,
    columns.map((c) => c.id),
  );
  await requestIndexes(oc, deps, accountId, tableId, { build: [], drop: columns, search: false });
}
