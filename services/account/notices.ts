import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, many, one } from '../../entities/db.js';
import type { OperatorContext, RequestContext } from '../platform/context.js';
import { pageOf, paginationOf } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import { requireAccount } from './settings.js';

// Account notices: what the service tells an account about its own resources (a product running
// low, a feed switched off after repeated failures), kept for the account to read beside the
// event its receivers get. Written by the family whose change it reports, in that change's
// transaction; read by the account (GET /api/v3/notices) and by the operator.

export interface NoticeInput {
  /** What happened, in event words where there is one (product.low_stock, catalogue.feed.disabled). */
  kind: string;
  /** One readable sentence for a person. */
  message: string;
  data?: Record<string, unknown>;
  /** At most one notice per key and account (e.g. `product.low_stock:<product>:<day>`); omit for notices that may repeat. */
  dedupeKey?: string | null;
}

/**
 * Records notices in one statement; a notice whose dedupe key the account already has is skipped
 * (on conflict do nothing). Answers how many were recorded. Call it with the transaction of the
 * change the notices report.
 */
export async function recordNotices(tx: EntityManager, accountId: number, notices: readonly NoticeInput[]): Promise<number> {
  if (!notices.length) return 0;
  return exec(
    tx,
    `insert into account_notices (account_id, kind, message, data, dedupe_key, created_at)
     select ?, e.n->>'kind', e.n->>'message', coalesce(e.n->'data', '{}'::jsonb), e.n->>'dedupeKey', now()
       from jsonb_array_elements(?::jsonb) with ordinality as e(n, ord)
      order by e.ord
     on conflict (account_id, dedupe_key) do nothing`,
    [accountId, JSON.stringify(notices)],
  );
}

/** One notice; true when recorded, false when its dedupe key was already there. */
export async function recordNotice(tx: EntityManager, accountId: number, notice: NoticeInput): Promise<boolean> {
  return (await recordNotices(tx, accountId, [notice])) === 1;
}

interface NoticeRow {
  id: string;
  account_id: number;
  kind: string;
  message: string;
  data: Record<string, unknown>;
  created_at: Date;
  read_at: Date | null;
}

const noticeView = (n: NoticeRow) => ({
  id: Number(n.id),
  kind: n.kind,
  message: n.message,
  data: n.data,
  created_at: iso(n.created_at),
  read_at: iso(n.read_at),
});

export const noticeSchema = {
  type: 'object',
  required: ['id', 'kind', 'message', 'data', 'created_at', 'read_at'],
  properties: {
    id: { type: 'integer' },
    kind: { type: 'string', description: 'what happened, in event words: product.low_stock, catalogue.feed.disabled…' },
    message: { type: 'string' },
    data: { type: 'object', description: 'the fields of the event the notice goes with' },
    created_at: { type: 'string', format: 'date-time' },
    read_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export interface NoticeQuery {
  page?: number;
  per_page?: number;
  limit?: number;
  kind?: string;
}

async function pageOfNotices(em: EntityManager, accountId: number, q: NoticeQuery) {
  const { page, perPage, offset } = pageOf(q);
  const where = ['account_id = ?'];
  const params: unknown[] = [accountId];
  if (q.kind) {
    where.push('kind = ?');
    params.push(q.kind);
  }
  const total = Number((await one<{ n: string }>(em, `select count(*) as n from account_notices where ${where.join(' and ')}`, params))!.n);
  const rows = await many<NoticeRow>(
    em,
    `select id, account_id, kind, message, data, created_at, read_at from account_notices
      where ${where.join(' and ')} order by id desc limit ? offset ?`,
    [...params, perPage, offset],
  );
  return { notices: rows.map(noticeView), pagination: paginationOf(page, perPage, total) };
}

/** The caller's notices, newest first (default 20 a page, at most 100). */
export const listNotices = (rc: RequestContext, q: NoticeQuery) => pageOfNotices(rc.em, rc.account.id, q);

/** An account's notices for the operator, newest first. */
export async function listAccountNotices(oc: OperatorContext, accountId: number, q: NoticeQuery) {
  await requireAccount(oc, accountId);
  return pageOfNotices(oc.em, accountId, q);
}
