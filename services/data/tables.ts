import type { RequestContext } from '../platform/context.js';
import { DomainError } from '../platform/errors.js';
import { canViewTable, canWriteTable, type ColumnDef, type DataCaller } from '../../domain/data/index.js';
import {
  accountTables,
  definitionVersion,
  tableColumns,
  tableDefinition,
  type DataTableRow,
  type TableDefinition,
} from './store/definitions.js';

// A table as every data service reads it: the row, its columns in position order, and the caller
// the rules are applied for. Loading it is where visibility is decided: a table of another account
// or one the caller may not see is not found (404), one it sees but may not write is 403.

/** A table's row: its definition and counters (definition_version: see the definition cache below). */
export type TableRow = DataTableRow;

/** What a table and a data group show alike: id, name, slug, description, icon (the answers' schemas). */
export const namedProperties = {
  id: { type: 'string', format: 'uuid' },
  name: { type: 'string' },
  slug: { type: 'string' },
  description: { type: ['string', 'null'] },
  icon: { type: ['string', 'null'] },
} as const;

export interface LoadedTable {
  table: TableRow;
  /** Position order: record data keys are returned in this order. */
  columns: ColumnDef[];
  caller: DataCaller;
  /**
   * True when the definition came from this process's cache: its counters (records_count,
   * storage_bytes, auto_number_seq) may be old, and whatever relies on the definition must check
   * table.definition_version in its own statement (withTableDefinition).
   */
  cached?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (s: string) => UUID.test(s);

/** The data envelope's not_found (table or record identity). */
export const dataNotFound = (what: 'Table' | 'Record' | 'Group') =>
  new DomainError('not_found', `${what} not found.`, { code: 'not_found' });

/** The caller as the data rules see it. */
export function dataCaller(rc: RequestContext): DataCaller {
  const a = rc.actor;
  if (a.kind === 'operator' || a.kind === 'system') return { permissions: ['*'], userId: null, unrestricted: true };
  const issuer = a.issuer;
  return { permissions: issuer?.permissions ?? [], userId: issuer?.id ?? null, unrestricted: false };
}

export function columnsOf(rc: Pick<RequestContext, 'em'>, tableId: string): Promise<ColumnDef[]> {
  return tableColumns(rc.em, tableId);
}

type DefinitionRow = TableDefinition;

/**
 * The caller's table by its UUID (or, for convenience, its slug). `need: 'write'` also checks the
 * table's write grant (403 permission_denied when the caller sees the table but may not write it).
 * One statement: the row with its columns aggregated (every data request starts here, so a second
 * round trip would be paid by each of them).
 */
export async function loadTable(rc: RequestContext, ref: string, need: 'view' | 'write' = 'view'): Promise<LoadedTable> {
  const row = await tableDefinition(rc.em, rc.account.id, ref, isUuid(ref));
  if (row) rememberDefinition(rc.account.id, ref, row);
  return admitted(rc, row, need, false);
}

/** The caller's rights on a loaded definition: a table it may not see is not found, one it may not write is 403. */
function admitted(rc: RequestContext, row: DefinitionRow | null | undefined, need: 'view' | 'write', cached: boolean): LoadedTable {
  const caller = dataCaller(rc);
  if (!row || !canViewTable(row.access, caller)) throw dataNotFound('Table');
  if (need === 'write' && !canWriteTable(row.access, caller))
    throw new DomainError('forbidden', 'You may read this table but not write to it.', {
      code: 'permission_denied',
      reason: 'table_write_grant',
    });
  const { columns_json: columns, ...table } = row;
  return { table, columns, caller, ...(cached ? { cached } : {}) };
}

// ---- the definition cache ------------------------------------------------------------------------
// The hot record paths (list, create) would otherwise pay a round trip per request for a definition
// that changes a few times a day. Each process keeps the definitions it loaded; a request using one
// checks table.definition_version inside its own statement (the database bumps it on every change,
// whoever makes it: Migration20261125000000), so with many API processes and no message between
// them a change is still seen by the very next statement. Found stale (StaleDefinition), or refused
// while cached, the request is run again once on a definition loaded afresh.

const CACHE_LIMIT = 2_000;
const definitions = new Map<string, DefinitionRow>();
const cacheKey = (accountId: number, ref: string) => `${accountId}:${ref}`;

function rememberDefinition(accountId: number, ref: string, row: DefinitionRow): void {
  const key = cacheKey(accountId, ref);
  definitions.delete(key);
  // Oldest first in a Map: the least recently loaded go when the cache is full.
  if (definitions.size >= CACHE_LIMIT) definitions.delete(definitions.keys().next().value!);
  definitions.set(key, row);
}

/** Thrown where a statement found the table's definition_version moved past the one it was built on. */
export class StaleDefinition extends Error {
  constructor() {
    super('the table definition changed while it was in use');
  }
}

/** Whether the definition a request used is still the table's (one round trip, on refusal paths only). */
async function stillCurrent(rc: RequestContext, t: LoadedTable): Promise<boolean> {
  const now = await definitionVersion(rc.em, rc.account.id, t.table.id);
  return now !== null && now === String(t.table.definition_version);
}

/** Fresh loads a request makes before it gives up on a definition that keeps changing under it. */
const FRESH_LOADS = 5;

/**
 * Runs `body` on the caller's table, from the definition cache when it holds it. `body` must check
 * t.table.definition_version in the statement its answer rests on and throw StaleDefinition when it
 * moved (or call definitionCheck for a result that had no row to carry the check). A refusal made on
 * a cached definition is kept only once the definition is confirmed current; otherwise, and when
 * stale, the request runs again on a definition loaded afresh. Only for bodies that write nothing
 * before their checked statement (a failed statement writes nothing either).
 */
export async function withTableDefinition<T>(
  rc: RequestContext,
  ref: string,
  need: 'view' | 'write',
  body: (t: LoadedTable) => Promise<T>,
): Promise<T> {
  // Inside a caller's transaction a failed statement would end it: no second try there.
  if (rc.em.isInTransaction()) return body(await loadTable(rc, ref, need));
  const key = cacheKey(rc.account.id, ref);
  const hit = definitions.get(key);
  if (hit) {
    const t = (() => {
      try {
        return admitted(rc, hit, need, true);
      } catch {
        return null; // refused on the cached rights: decided again on the current ones below
      }
    })();
    if (t) {
      try {
        return await body(t);
      } catch (err) {
        if (!(err instanceof StaleDefinition) && !(err instanceof DomainError && !(await stillCurrent(rc, t)))) throw err;
      }
    }
    definitions.delete(key);
  }
  // Changed again between the load and the statement: a table whose index workflow is moving its
  // statuses (pending, building, ready, right after creation) can do that a few times in a row.
  for (let load = 1; ; load++) {
    try {
      return await body(await loadTable(rc, ref, need));
    } catch (err) {
      if (!(err instanceof StaleDefinition)) throw err;
      if (load >= FRESH_LOADS)
        throw new DomainError('conflict', "The table's definition is being changed; try again.", {
          code: 'conflict',
          reason: 'definition_changing',
        });
    }
  }
}

/** For a statement that answered no rows (nothing carried the version): confirms the definition, else StaleDefinition. */
export async function definitionCheck(rc: RequestContext, t: LoadedTable): Promise<void> {
  if (t.cached && !(await stillCurrent(rc, t))) throw new StaleDefinition();
}

/** Forgets every cached definition (tests that change definitions behind the service's back). */
export function forgetDefinitions(): void {
  definitions.clear();
}

/** Every table the caller may see, by name. */
export async function visibleTables(rc: RequestContext): Promise<TableRow[]> {
  const rows = await accountTables(rc.em, rc.account.id);
  const caller = dataCaller(rc);
  return rows.filter((t) => canViewTable(t.access, caller));
}

/** The column named by a key, or undefined (never trust a key from a request without this). */
export const columnByKey = (t: LoadedTable, key: string) => t.columns.find((c) => c.key === key);
