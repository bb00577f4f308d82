import type { EntityManager } from '@mikro-orm/postgresql';
import type { OperatorContext, RequestContext } from '../platform/context.js';
import type { FromSchema } from 'json-schema-to-ts';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import { requireAccount } from './settings.js';
import { insertNotices, noticesPage, type NoticeRecord } from './store.js';

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
  return insertNotices(tx, accountId, notices);
}

/** One notice; true when recorded, false when its dedupe key was already there. */
export async function recordNotice(tx: EntityManager, accountId: number, notice: NoticeInput): Promise<boolean> {
  return (await recordNotices(tx, accountId, [notice])) === 1;
}

const noticeView = (n: Omit<NoticeRecord, 'dedupe_key'>) => ({
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

export const noticeQuerySchema = {
  type: 'object',
  properties: {
    kind: { type: 'string', minLength: 1, maxLength: 64, description: 'only notices of this kind (product.low_stock…)' },
    ...pageQueryProperties,
  },
} as const;
export type NoticeQuery = FromSchema<typeof noticeQuerySchema>;

async function pageOfNotices(em: EntityManager, accountId: number, q: NoticeQuery) {
  const page = pageOf(q);
  const { total, rows } = await noticesPage(em, accountId, { kind: q.kind, limit: page.perPage, offset: page.offset });
  return pageAnswer('notices', rows.map(noticeView), page, total);
}

/** The caller's notices, newest first (default 20 a page, at most 100). */
export const listNotices = (rc: RequestContext, q: NoticeQuery) => pageOfNotices(rc.em, rc.account.id, q);

/** An account's notices for the operator, newest first. */
export async function listAccountNotices(oc: OperatorContext, accountId: number, q: NoticeQuery) {
  await requireAccount(oc, accountId);
  return pageOfNotices(oc.em, accountId, q);
}
