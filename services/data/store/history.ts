import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';
import type { HistoryAction, HistoryActor } from '../../../domain/data/index.js';

// Record history (data_record_history): one row per write, written in the write's transaction.

export interface HistoryWrite {
  accountId: number;
  tableId: string;
  recordId: string;
  action: HistoryAction;
  changes: Record<string, { before: unknown; after: unknown }>;
  actor: HistoryActor;
  source: string;
}

export async function insertHistory(em: EntityManager, h: HistoryWrite): Promise<void> {
  await exec(
    em,
    `insert into data_record_history (account_id, table_id, record_id, action, changes, actor, source, reason, created_at)
     values (?, ?::uuid, ?::uuid, ?, ?::jsonb, ?::jsonb, ?, null, now())`,
    [h.accountId, h.tableId, h.recordId, h.action, JSON.stringify(h.changes), JSON.stringify(h.actor), h.source],
  );
}

export type HistoryEntry = Pick<
  Row<'data', 'data_record_history'>,
  'id' | 'record_id' | 'changes' | 'actor' | 'source' | 'reason' | 'created_at'
> & { action: HistoryAction };

/** A record's entries, newest first, older than `beforeId` when given; `limit` of them at most. */
export function historyPage(
  em: EntityManager,
  accountId: number,
  tableId: string,
  recordId: string,
  beforeId: string | null,
  limit: number,
) {
  return many<HistoryEntry>(
    em,
    // Ordered by the column, not the text alias of the same name (text order puts 99 after 100).
    `select h.id::text as id, h.record_id, h.action, h.changes, h.actor, h.source, h.reason, h.created_at
       from data_record_history h
      where h.record_id = ?::uuid and h.table_id = ?::uuid and h.account_id = ? and (?::bigint is null or h.id < ?::bigint)
      order by h.id desc limit ?`,
    [recordId, tableId, accountId, beforeId, beforeId, limit],
  );
}
