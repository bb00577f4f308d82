import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { pageAnswer } from '../platform/pagination.js';
import { iso } from '../platform/time.js';
import type { Config } from '../../config.js';
import { startWorkflow } from '../../temporal/starters.js';
import type { CatalogueSyncInput } from '../../workflows/catalogues/catalogue-sync.js';
import { catalogueSyncStarter } from '../../workflows/catalogues/catalogue-sync.starter.js';
import { listPage } from '../../domain/catalogues/product-input.js';
import { CATALOGUE_LIMITS, SYNC_KINDS, SYNC_MODES, SYNC_STATUSES, PLATFORMS, type SyncMode } from '../../domain/catalogues/vocabulary.js';
import { requireShop } from './shops.js';
import {
  countSyncs,
  insertBatchRun,
  stageBatchPage,
  syncOfShop,
  syncRunOfKey,
  syncsPage,
  takeAcceptLock,
  type SyncRunRow,
} from './store/syncs.js';

export type { SyncRunRow };

// Sync runs (Resources > Sync run report; Endpoints: products/batch, syncs, syncs/{sync}). A batch is
// accepted in one transaction (the run, its rows staged as one page, the workflow start): a 202 is never lost,
// and a failed start leaves nothing behind. The rows are judged and applied by the workflow.

export interface SyncServiceDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'catalogueSyncChunkSize'>;
}

export interface BatchRequest {
  mode?: SyncMode;
  products: unknown[];
  /** The Idempotency-Key header (the REST door puts it here), or the body field MCP callers send. */
  idempotency_key?: string;
}

const count = { type: 'integer', minimum: 0 } as const;

/** The sync run report (Resources > Sync run report) with the run's own fields beside it. */
export const syncReportSchema = {
  type: 'object',
  required: [
    'id',
    'sync_id',
    'catalogue_id',
    'kind',
    'mode',
    'status',
    'received',
    'created',
    'updated',
    'rejected',
    'retired',
    'platforms',
    'problems',
    'problems_truncated',
    'replayed',
  ],
  properties: {
    id: { type: 'integer', description: 'the sync id' },
    sync_id: { type: 'integer', description: 'the same sync id (the contract leaves the field name open; both are given)' },
    catalogue_id: { type: 'integer' },
    kind: { enum: [...SYNC_KINDS], description: 'batch, feed (a feed pull) or import (a spreadsheet import)' },
    feed_id: { type: ['integer', 'null'] },
    mode: { enum: [...SYNC_MODES] },
    status: {
      enum: [...SYNC_STATUSES],
      description: 'queued and running while the run works; poll until completed or failed',
    },
    received: { ...count, description: 'rows in the payload' },
    created: count,
    updated: { ...count, description: 'stored products the run changed (a row equal to its product changes nothing and is not counted)' },
    rejected: { ...count, description: 'rows not stored (each has a problem with stage ingest)' },
    retired: { ...count, description: 'replace mode: products missing from the payload, retired' },
    platforms: {
      type: 'object',
      description: 'per platform of the shop: products of this run the platform shows (synced) and those it cannot show yet (blocked)',
      propertyNames: { enum: [...PLATFORMS] },
      additionalProperties: { type: 'object', required: ['synced', 'blocked'], properties: { synced: count, blocked: count } },
    },
    problems: {
      type: 'array',
      maxItems: CATALOGUE_LIMITS.problemsKept,
      items: {
        type: 'object',
        required: ['sku', 'stage', 'reason'],
        properties: {
          sku: { type: ['string', 'null'] },
          stage: {
            enum: ['ingest', ...PLATFORMS],
            description: 'ingest: the row was not stored; a platform: stored, not shown there until fixed',
          },
          reason: { type: 'string' },
          row: { type: 'integer', description: '1-based row of the payload' },
          field: { type: 'string' },
        },
      },
    },
    problems_truncated: { type: 'boolean', description: `more problems existed than the ${CATALOGUE_LIMITS.problemsKept} kept` },
    replayed: { type: 'boolean', description: 'true when an Idempotency-Key matched this earlier run (nothing was imported again)' },
    failure_reason: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export function syncView(r: SyncRunRow, replayed = false) {
  const id = Number(r.id);
  return {
    id,
    sync_id: id,
    catalogue_id: r.catalogue_id,
    kind: r.kind,
    feed_id: r.feed_id,
    mode: r.mode,
    status: r.status,
    received: r.received,
    created: r.created,
    updated: r.updated,
    rejected: r.rejected,
    retired: r.retired,
    platforms: r.platforms,
    problems: r.problems,
    problems_truncated: r.problems_truncated,
    replayed,
    failure_reason: r.failure_reason,
    created_at: iso(r.created_at)!,
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
  };
}

/** JSON with object keys sorted: the same request sent with its keys in another order hashes the same. */
export function canonicalJson(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort()
    .filter((k) => o[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
    .join(',')}}`;
}

/** The request a key stands for: the mode (upsert when absent) and the rows. */
export const batchRequestHash = (mode: SyncMode, products: unknown[]) =>
  crypto.createHash('sha256').update(canonicalJson({ mode, products })).digest('hex');

const KEY_FIELD = 'Idempotency-Key';
// Visible ASCII and spaces: what an HTTP header carries without encoding (Stripe's keys are up to 255).
const KEY_SHAPE = /^[\x20-\x7e]{1,255}$/;

function idempotencyKeyOf(key: string | undefined): string | null {
  if (key === undefined) return null;
  if (!KEY_SHAPE.test(key) || key.trim() === '')
    throw validationFailed({ [KEY_FIELD]: [`The ${KEY_FIELD} must be 1 to 255 visible ASCII characters.`] });
  return key;
}

/** The earlier run of a key: the same request is replayed (nothing imported again), another is a conflict. */
function replayOf(earlier: SyncRunRow, hash: string) {
  if (earlier.request_hash !== hash)
    throw conflict(`The ${KEY_FIELD} was already used with a different request on this catalogue (sync ${earlier.id}).`);
  return syncView(earlier, true);
}

/**
 * POST …/products/batch: the run and its staged rows (one page) in one transaction, the workflow started
 * inside it (a start that fails rolls the run back; a commit that fails leaves a workflow that finds
 * no run and ends). With an Idempotency-Key, the same request again answers the earlier run with
 * replayed true and imports nothing; the key with another request is a 409. Two requests racing on
 * one key meet on the (catalogue, key) unique constraint: the second waits for the first and replays it.
 */
export async function acceptBatch(rc: RequestContext, deps: SyncServiceDeps, catalogueRef: string, input: BatchRequest) {
  const shop = await requireShop(rc, catalogueRef);
  const key = idempotencyKeyOf(input.idempotency_key);
  const mode = input.mode ?? 'upsert';
  const hash = key === null ? null : batchRequestHash(mode, input.products);
  const findKey = () => syncRunOfKey(rc.em, shop.id, key);
  if (key !== null) {
    const earlier = await findKey();
    if (earlier) return replayOf(earlier, hash!);
  }
  const accepted = await rc.em.transactional(async (em) => {
    const run = await insertBatchRun(em, {
      accountId: rc.account.id,
      catalogueId: shop.id,
      mode,
      key,
      hash,
      received: input.products.length,
    });
    if (!run) return null;
    // Held to the commit: the workflow's first step waits on it rather than finding no run yet.
    await takeAcceptLock(em, Number(run.id));
    const args: CatalogueSyncInput = {
      accountId: rc.account.id,
      catalogueId: shop.id,
      syncId: Number(run.id),
      chunkSize: deps.config.catalogueSyncChunkSize,
    };
    // Staged and started side by side: the start needs none of the rows, and either failing rolls both back.
    // The rows are one page (a json document, rows 1..n): 5,000 rows inserted one by one cost about
    // 50 ms here, the page about 15.
    await Promise.all([
      stageBatchPage(em, run.id, input.products),
      startWorkflow(deps, catalogueSyncStarter, { accountId: rc.account.id, syncId: Number(run.id) }, [args]),
    ]);
    return run;
  });
  if (accepted) return syncView(accepted);
  // Another request with this key committed first.
  const winner = await findKey();
  if (!winner) throw conflict(`A request with this ${KEY_FIELD} is being accepted; retry it.`);
  return replayOf(winner, hash!);
}

/** GET …/syncs: the shop's runs newest first (batches, feed pulls, spreadsheet imports), page-number. */
export async function listSyncs(rc: RequestContext, catalogueRef: string, q: { page?: number; per_page?: number; limit?: number }) {
  const shop = await requireShop(rc, catalogueRef);
  const { page, perPage, offset } = listPage(q);
  const total = await countSyncs(rc.em, shop.id, rc.account.id);
  const rows = await syncsPage(rc.em, shop.id, rc.account.id, perPage, offset);
  return pageAnswer(
    'syncs',
    rows.map((r) => syncView(r)),
    { page, perPage },
    total,
  );
}

/** GET …/syncs/{sync}: the sync run report; another shop's or tenant's run is a 404. */
export async function getSync(rc: RequestContext, catalogueRef: string, syncRef: string) {
  const shop = await requireShop(rc, catalogueRef);
  const row = /^\d{1,18}$/.test(syncRef) ? await syncOfShop(rc.em, syncRef, shop.id, rc.account.id) : null;
  if (!row) throw notFound('Sync run');
  return syncView(row);
}
