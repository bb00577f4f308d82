// Meta's Commerce catalogue Graph API (the catalogue a WhatsApp, Facebook or Instagram shop shows),
// under the same /whatsapp/{version} prefix and bearer token as the Cloud API routes:
//
//   POST   /{business_id}/owned_product_catalogs {name, vertical?}            → {id}
//   GET    /{catalog_id}                                                       → {id, name, vertical, product_count}
//   DELETE /{catalog_id}                                                       → {success: true}
//   POST   /{catalog_id}/items_batch {item_type, allow_upsert?, requests[]}   → {handles: [h]}
//   GET    /{catalog_id}/check_batch_request_status?handle=h                   → {data: [{handle, status, errors, warnings, …}]}
//   GET    /{catalog_id}/products?fields=&limit=&after=&filter=                → {data: [...], paging: {cursors, next?}}
//
// The Batch API is asynchronous as on Meta: a handle is `in_progress` for `batchProcessingMs`, then
// `finished`, and only then are its items applied (lazily, at the next request that touches the
// catalogue, so no timer runs). Per-item problems (missing title, price or image_link on an item
// being created, a bad price string, …) fail that item alone; the rest are stored.
//
// Choices where Meta's docs are not explicit (documented in docs/decisions.md, "Catalogue platforms"):
// - `errors[].line` is the 0-based index of the request in `requests`; `errors[].id` the retailer id.
// - `price`/`sale_price` are read back in the batch form ('12.50 USD'), not Meta's locale-formatted
//   display form ('$12.50'), so a comparison with what was sent is exact.
// - `products` pages are keyset pages in creation order; `limit` defaults to 25 and is capped at 1000;
//   `fields` defaults to id,retailer_id,name; `filter` takes {"retailer_id":{"eq":x}} or {"retailer_id":{"is_any":[…]}}.
// - CREATE of an existing retailer id is an item error; UPDATE of an absent one creates it unless
//   allow_upsert is false (then an item error); DELETE of an absent one is a warning only.
import { Router } from '@koa/router';
import { randomBytes, randomInt } from 'node:crypto';
import type { Context as KoaContext } from 'koa';
import { BodyError, readJson } from './body.js';
import { isObj } from './graph-errors.js';
import type { SimState } from './state.js';

/** What the router hands a route: Koa's context and the path parameters. */
type Context = KoaContext & { params: Record<string, string> };

export const MAX_BATCH_REQUESTS = 5000;
const PRODUCTS_LIMIT_DEFAULT = 25;
const PRODUCTS_LIMIT_MAX = 1000;
const AVAILABILITY = ['in stock', 'out of stock', 'preorder', 'available for order', 'discontinued', 'pending', 'mark_as_sold'];
const CONDITION = ['new', 'refurbished', 'used', 'used_like_new', 'used_good', 'used_fair', 'cpo', 'open_box_new'];
/** '12.50 USD': a number with at most two decimals, a space, an ISO 4217 code. */
const PRICE = /^\d{1,13}(\.\d{1,2})? [A-Z]{3}$/;
const ITEM_FIELDS = [
  'title',
  'description',
  'availability',
  'condition',
  'price',
  'sale_price',
  'currency',
  'link',
  'image_link',
  'brand',
  'google_product_category',
  'product_type',
  'inventory',
] as const;
/** Fields a GET …/products may ask for (ProductItem). */
const PRODUCT_FIELDS = [
  'id',
  'retailer_id',
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'availability',
  'condition',
  'brand',
  'category',
  'product_type',
  'image_url',
  'url',
  'inventory',
];

export interface CatalogueItem {
  seq: number;
  /** Meta's product id (what `GET …/products` calls `id`). */
  id: string;
  retailerId: string;
  /** The item as the batches left it, in the Batch API's field names. */
  data: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export interface CatalogueRecord {
  id: string;
  businessId: string;
  name: string;
  vertical: string;
  createdAt: number;
  items: Map<string, CatalogueItem>;
}

export interface BatchProblem {
  line: number;
  id: string;
  message: string;
}

interface BatchRequest {
  method: 'CREATE' | 'UPDATE' | 'DELETE';
  data: Record<string, unknown>;
}

export interface BatchRecord {
  handle: string;
  catalogId: string;
  allowUpsert: boolean;
  requests: BatchRequest[];
  createdAt: number;
  /** When the handle turns finished; null = never (the `hang` fault). */
  finishAt: number | null;
  /** Retailer ids an `item_error` fault failed, with the fault's message. */
  forcedErrors: Map<string, string>;
  applied: boolean;
  errors: BatchProblem[];
  warnings: BatchProblem[];
}

export const CATALOGUE_FAULT_KINDS = ['refuse_create', 'refuse_batch', 'rate_limit', 'http_500', 'hang', 'item_error'] as const;
export type CatalogueFaultKind = (typeof CATALOGUE_FAULT_KINDS)[number];

export interface CatalogueFault {
  id: number;
  kind: CatalogueFaultKind;
  /** Only this catalogue (refuse_batch, rate_limit, http_500, hang, item_error); null = any. */
  catalogId: string | null;
  /** refuse_create: only a catalogue of this name (tests running side by side each refuse their own); null = any. */
  name: string | null;
  /** item_error: the retailer ids that fail. */
  retailerIds: string[] | null;
  /** Matching calls (items for item_error) still affected; -1 = until cleared. */
  remaining: number;
  code: number | null;
  message: string | null;
  retryAfter: number | null;
  hits: number;
}

export type CatalogueCall = 'create_catalog' | 'get_catalog' | 'delete_catalog' | 'items_batch' | 'check_batch_request_status' | 'products';

export interface CatalogueState {
  catalogs: Map<string, CatalogueRecord>;
  batches: Map<string, BatchRecord>;
  faults: CatalogueFault[];
  calls: Record<CatalogueCall, number> & { items_batch_requests: number };
  /** How long a handle stays in_progress. */
  batchProcessingMs: number;
  faultSeq: number;
  itemSeq: number;
}

const noCalls = () => ({
  create_catalog: 0,
  get_catalog: 0,
  delete_catalog: 0,
  items_batch: 0,
  check_batch_request_status: 0,
  products: 0,
  items_batch_requests: 0,
});

export function createCatalogueState(batchProcessingMs: number): CatalogueState {
  return {
    catalogs: new Map(),
    batches: new Map(),
    faults: [],
    calls: noCalls(),
    batchProcessingMs,
    faultSeq: 0,
    itemSeq: 0,
  };
}

/** Forgets catalogues, batches, faults and counts; the processing time survives, like /_sim/config. */
export function resetCatalogueState(s: CatalogueState): void {
  s.catalogs.clear();
  s.batches.clear();
  s.faults.length = 0;
  s.calls = noCalls();
}

// --- Graph errors -----------------------------------------------------------------------------------

/** Meta's own wording for the codes the catalogue endpoints answer with. */
const CATALOGUE_ERRORS: Record<number, { status: number; type: string; message: string }> = {
  1: { status: 400, type: 'OAuthException', message: "Please reduce the amount of data you're asking for, then retry your request" },
  2: { status: 500, type: 'OAuthException', message: 'An unexpected error has occurred. Please retry your request later.' },
  4: { status: 400, type: 'OAuthException', message: '(#4) Application request limit reached' },
  100: { status: 400, type: 'OAuthException', message: '(#100) Invalid parameter' },
  200: { status: 403, type: 'OAuthException', message: '(#200) Requires business_management permission to manage the object' },
  80014: {
    status: 400,
    type: 'OAuthException',
    message: '(#80014) There have been too many calls for the batch uploads to this catalog account. Wait a bit and try again.',
  },
};

function catalogueError(ctx: Context, state: SimState, code: number, message?: string, status?: number, subcode?: number): void {
  const known = CATALOGUE_ERRORS[code];
  ctx.status = status ?? known?.status ?? (code === 190 ? 401 : 400);
  const error: Record<string, unknown> = {
    message: message ?? known?.message ?? `(#${code}) Simulated error`,
    type: known?.type ?? 'OAuthException',
    code,
    fbtrace_id: randomBytes(12).toString('base64url'),
  };
  if (subcode !== undefined) error.error_subcode = subcode;
  ctx.body = { error };
  state.rejections.push({
    seq: state.nextSeq(),
    provider: 'whatsapp',
    at: new Date().toISOString(),
    to: null,
    httpStatus: ctx.status,
    code,
    message: String(error.message),
    fault: null,
  });
}

/** Graph's answer for an id that is not there (or not the caller's). */
function unknownObject(ctx: Context, state: SimState, id: string, verb: 'get' | 'post' | 'delete'): void {
  catalogueError(
    ctx,
    state,
    100,
    `Unsupported ${verb} request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
    400,
    33,
  );
  (ctx.body as { error: Record<string, unknown> }).error.type = 'GraphMethodException';
}

// --- Faults -----------------------------------------------------------------------------------------

export class CatalogueFaultError extends Error {}

export function addCatalogueFault(s: CatalogueState, input: unknown): CatalogueFault {
  if (!isObj(input)) throw new CatalogueFaultError('body must be a JSON object');
  if (!CATALOGUE_FAULT_KINDS.includes(input.kind as CatalogueFaultKind)) {
    throw new CatalogueFaultError(`kind must be one of ${CATALOGUE_FAULT_KINDS.join(', ')}`);
  }
  const kind = input.kind as CatalogueFaultKind;
  const count = input.count === undefined ? 1 : input.count;
  if (typeof count !== 'number' || !Number.isInteger(count) || (count < 1 && count !== -1)) {
    throw new CatalogueFaultError('count must be a positive integer or -1');
  }
  if (input.code !== undefined && (typeof input.code !== 'number' || !Number.isInteger(input.code)))
    throw new CatalogueFaultError('code must be an integer');
  if (input.message !== undefined && typeof input.message !== 'string') throw new CatalogueFaultError('message must be a string');
  if (input.retryAfter !== undefined && (typeof input.retryAfter !== 'number' || input.retryAfter < 0)) {
    throw new CatalogueFaultError('retryAfter must be a non-negative number of seconds');
  }
  if (input.catalogId !== undefined && typeof input.catalogId !== 'string') throw new CatalogueFaultError('catalogId must be a string');
  if (input.name !== undefined && typeof input.name !== 'string') throw new CatalogueFaultError('name must be a string');
  let retailerIds: string[] | null = null;
  if (kind === 'item_error') {
    const ids = input.retailerIds;
    if (!Array.isArray(ids) || ids.length === 0 || ids.some((x) => typeof x !== 'string')) {
      throw new CatalogueFaultError("kind 'item_error' needs `retailerIds`, an array of retailer ids");
    }
    retailerIds = ids as string[];
  }
  const fault: CatalogueFault = {
    id: ++s.faultSeq,
    kind,
    catalogId: typeof input.catalogId === 'string' ? input.catalogId : null,
    name: typeof input.name === 'string' ? input.name : null,
    retailerIds,
    remaining: count,
    code: typeof input.code === 'number' ? input.code : null,
    message: typeof input.message === 'string' ? input.message : null,
    retryAfter: typeof input.retryAfter === 'number' ? input.retryAfter : null,
    hits: 0,
  };
  s.faults.push(fault);
  return fault;
}

function use(s: CatalogueState, fault: CatalogueFault): CatalogueFault {
  fault.hits += 1;
  if (fault.remaining > 0) fault.remaining -= 1;
  if (fault.remaining === 0) s.faults.splice(s.faults.indexOf(fault), 1);
  return { ...fault };
}

/** Consumes one use of the oldest fault of one of `kinds` for this catalogue. */
function takeFault(
  s: CatalogueState,
  kinds: readonly CatalogueFaultKind[],
  catalogId: string | null,
  name: string | null = null,
): CatalogueFault | null {
  const fault = s.faults.find(
    (f) =>
      kinds.includes(f.kind) &&
      (f.catalogId === null || f.catalogId === catalogId) &&
      (f.name === null || f.name === name) &&
      f.remaining !== 0,
  );
  return fault ? use(s, fault) : null;
}

// --- Items ------------------------------------------------------------------------------------------

/** Meta product ids are 16 digits (randomInt draws at most 48 bits, so two halves). */
const productId = (): string =>
  String(randomInt(1, 10)) + String(randomInt(0, 1e8)).padStart(8, '0') + String(randomInt(0, 1e7)).padStart(7, '0');

function itemProblems(req: BatchRequest, existing: CatalogueItem | undefined, allowUpsert: boolean): string | null {
  const d = req.data;
  const id = d.id;
  if (typeof id !== 'string' || id === '') return 'Missing required field: id';
  if (id.length > 100) return 'The id (retailer id) must be at most 100 characters';
  if (req.method === 'DELETE') return null;
  if (req.method === 'CREATE' && existing) return `A product with retailer id ${id} already exists in this catalog`;
  if (req.method === 'UPDATE' && !existing && !allowUpsert) return `No product with retailer id ${id} exists in this catalog`;
  const creating = !existing;
  const text = (field: string, max: number): string | null => {
    const v = d[field];
    if (v === undefined || v === null || v === '')
      return creating && ['title', 'price', 'image_link'].includes(field) ? `Missing required field: ${field}` : null;
    if (typeof v !== 'string') return `Invalid value for ${field}: must be a string`;
    if (v.length > max) return `Invalid value for ${field}: must be at most ${max} characters`;
    return null;
  };
  const problem = text('title', 200) ?? text('description', 9999) ?? text('image_link', 2048) ?? text('price', 64);
  if (problem) return problem;
  for (const field of ['price', 'sale_price'] as const) {
    const v = d[field];
    if (v !== undefined && v !== null && v !== '' && (typeof v !== 'string' || !PRICE.test(v))) {
      return `Invalid ${field}: the value must be a number followed by an ISO 4217 currency code, e.g. 9.99 USD`;
    }
  }
  if (d.availability !== undefined && !AVAILABILITY.includes(d.availability as string))
    return `Invalid availability: ${String(d.availability)}`;
  if (d.condition !== undefined && !CONDITION.includes(d.condition as string)) return `Invalid condition: ${String(d.condition)}`;
  return null;
}

/** Applies a finished batch to its catalogue once (lazily: any request that touches the catalogue first settles due batches). */
function applyBatch(s: CatalogueState, batch: BatchRecord, now: number): void {
  const catalog = s.catalogs.get(batch.catalogId);
  batch.applied = true;
  if (!catalog) return;
  batch.requests.forEach((req, line) => {
    const id = typeof req.data.id === 'string' ? req.data.id : '';
    const forced = batch.forcedErrors.get(id);
    if (forced !== undefined) {
      batch.errors.push({ line, id, message: forced });
      return;
    }
    const existing = catalog.items.get(id);
    const problem = itemProblems(req, existing, batch.allowUpsert);
    if (problem) {
      batch.errors.push({ line, id, message: problem });
      return;
    }
    if (req.method === 'DELETE') {
      if (!existing) batch.warnings.push({ line, id, message: `No product with retailer id ${id} exists in this catalog` });
      catalog.items.delete(id);
      return;
    }
    // A field sent as null or '' is cleared (how a removed sale price reaches the platform).
    const fields: Record<string, unknown> = { ...existing?.data };
    for (const f of ITEM_FIELDS) {
      const v = req.data[f];
      if (v === null || v === '') delete fields[f];
      else if (v !== undefined) fields[f] = v;
    }
    if (existing) {
      existing.data = fields;
      existing.updatedAt = now;
    } else {
      catalog.items.set(id, { seq: ++s.itemSeq, id: productId(), retailerId: id, data: fields, createdAt: now, updatedAt: now });
    }
  });
}

function settleDue(s: CatalogueState, catalogId: string, now = Date.now()): void {
  for (const b of s.batches.values())
    if (!b.applied && b.catalogId === catalogId && b.finishAt !== null && b.finishAt <= now) applyBatch(s, b, now);
}

/** A stored item as GET …/products shows it (ProductItem field names). */
export function productView(item: CatalogueItem): Record<string, unknown> {
  const d = item.data;
  const price = typeof d.price === 'string' ? d.price : null;
  return {
    id: item.id,
    retailer_id: item.retailerId,
    name: d.title ?? null,
    description: d.description ?? null,
    price,
    sale_price: d.sale_price ?? null,
    currency: d.currency ?? (price ? price.slice(-3) : null),
    availability: d.availability ?? 'in stock',
    condition: d.condition ?? 'new',
    brand: d.brand ?? null,
    category: d.google_product_category ?? null,
    product_type: d.product_type ?? null,
    image_url: d.image_link ?? null,
    url: d.link ?? null,
    inventory: d.inventory ?? null,
  };
}

const cursorOf = (seq: number) => Buffer.from(`seq:${seq}`).toString('base64url');
function seqOf(cursor: string): number | null {
  const m = /^seq:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  return m ? Number(m[1]) : null;
}

function retailerFilter(raw: string): Set<string> | string {
  let f: unknown;
  try {
    f = JSON.parse(raw);
  } catch {
    return '(#100) Param filter must be a JSON-encoded filter rule';
  }
  const rule = isObj(f) && isObj(f.retailer_id) ? f.retailer_id : null;
  if (rule && typeof rule.eq === 'string') return new Set([rule.eq]);
  if (rule && Array.isArray(rule.is_any) && rule.is_any.every((x) => typeof x === 'string')) return new Set(rule.is_any as string[]);
  return '(#100) Param filter supports only {"retailer_id":{"eq":…}} or {"retailer_id":{"is_any":[…]}} in this simulator';
}

// --- Routes -----------------------------------------------------------------------------------------

export function metaCatalogueRouter(state: SimState): Router {
  const s = state.catalogue;
  const r = new Router({ prefix: '/whatsapp/:version' });

  // Auth and version first, as on the messages route; false = already answered.
  const admitted = (ctx: Context): boolean => {
    if (ctx.get('authorization') !== `Bearer ${state.options.waAccessToken}`) {
      catalogueError(ctx, state, 190, 'Invalid OAuth access token - Cannot parse access token');
      ctx.set('WWW-Authenticate', 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token"');
      return false;
    }
    if (!/^v\d+\.\d+$/.test(ctx.params.version ?? '')) {
      catalogueError(ctx, state, 100, `Unknown path components: /${ctx.params.version}`);
      return false;
    }
    return true;
  };
  const body = async (ctx: Context): Promise<Record<string, unknown> | null> => {
    try {
      const b = await readJson(ctx);
      if (isObj(b)) return b;
      catalogueError(ctx, state, 100, '(#100) The request body must be a JSON object');
    } catch (err) {
      if (!(err instanceof BodyError)) throw err;
      catalogueError(ctx, state, 100, `(#100) ${err.message}`, err.status === 413 ? 413 : 400);
    }
    return null;
  };
  const catalogOf = (ctx: Context, verb: 'get' | 'post' | 'delete'): CatalogueRecord | null => {
    const id = ctx.params.catalogId ?? '';
    const c = s.catalogs.get(id);
    if (!c) unknownObject(ctx, state, id, verb);
    else settleDue(s, c.id);
    return c ?? null;
  };
  const syncFault = (ctx: Context, catalogId: string | null, kinds: readonly CatalogueFaultKind[], name: string | null = null): boolean => {
    const f = takeFault(s, kinds, catalogId, name);
    if (!f) return false;
    if (f.retryAfter !== null) ctx.set('Retry-After', String(f.retryAfter));
    if (f.kind === 'http_500') catalogueError(ctx, state, f.code ?? 2, f.message ?? undefined, 500);
    else if (f.kind === 'rate_limit') catalogueError(ctx, state, f.code ?? 80014, f.message ?? undefined);
    else catalogueError(ctx, state, f.code ?? (f.kind === 'refuse_create' ? 200 : 100), f.message ?? undefined);
    return true;
  };

  r.post('/:businessId/owned_product_catalogs', async (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.create_catalog += 1;
    const businessId = ctx.params.businessId ?? '';
    if (!/^\d+$/.test(businessId)) return unknownObject(ctx, state, businessId, 'post');
    const b = await body(ctx);
    if (!b) return;
    if (syncFault(ctx, null, ['refuse_create', 'rate_limit', 'http_500'], typeof b.name === 'string' ? b.name : null)) return;
    if (typeof b.name !== 'string' || b.name.trim() === '') return catalogueError(ctx, state, 100, '(#100) The parameter name is required');
    if (b.vertical !== undefined && typeof b.vertical !== 'string')
      return catalogueError(ctx, state, 100, '(#100) Param vertical must be a string');
    const id = String(randomInt(1, 9)) + String(randomInt(0, 1e14)).padStart(14, '0');
    s.catalogs.set(id, {
      id,
      businessId,
      name: b.name,
      vertical: typeof b.vertical === 'string' ? b.vertical : 'commerce',
      createdAt: Date.now(),
      items: new Map(),
    });
    state.log.info({ catalogId: id, name: b.name }, 'catalogue created');
    ctx.body = { id };
  });

  r.get('/:catalogId', (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.get_catalog += 1;
    const c = catalogOf(ctx, 'get');
    if (!c) return;
    ctx.body = { id: c.id, name: c.name, vertical: c.vertical, product_count: c.items.size };
  });

  r.delete('/:catalogId', (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.delete_catalog += 1;
    const c = catalogOf(ctx, 'delete');
    if (!c) return;
    s.catalogs.delete(c.id);
    ctx.body = { success: true };
  });

  r.post('/:catalogId/items_batch', async (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.items_batch += 1;
    const c = catalogOf(ctx, 'post');
    if (!c) return;
    const b = await body(ctx);
    if (!b) return;
    if (syncFault(ctx, c.id, ['refuse_batch', 'rate_limit', 'http_500'])) return;
    if (b.item_type !== undefined && b.item_type !== 'PRODUCT_ITEM') {
      return catalogueError(ctx, state, 100, '(#100) Param item_type must be one of {PRODUCT_ITEM}');
    }
    if (!Array.isArray(b.requests) || b.requests.length === 0)
      return catalogueError(ctx, state, 100, '(#100) Param requests must be a non-empty array');
    if (b.requests.length > MAX_BATCH_REQUESTS) return catalogueError(ctx, state, 1);
    const requests: BatchRequest[] = [];
    for (const [i, q] of b.requests.entries()) {
      if (!isObj(q) || !['CREATE', 'UPDATE', 'DELETE'].includes(q.method as string) || !isObj(q.data)) {
        return catalogueError(ctx, state, 100, `(#100) requests[${i}] must be {method: CREATE|UPDATE|DELETE, data: {id, …}}`);
      }
      requests.push({ method: q.method as BatchRequest['method'], data: q.data });
    }
    s.calls.items_batch_requests += requests.length;
    const now = Date.now();
    const hang = takeFault(s, ['hang'], c.id);
    const forcedErrors = new Map<string, string>();
    for (const q of requests) {
      const id = typeof q.data.id === 'string' ? q.data.id : '';
      const f = s.faults.find(
        (x) => x.kind === 'item_error' && (x.catalogId === null || x.catalogId === c.id) && x.retailerIds?.includes(id),
      );
      if (f) forcedErrors.set(id, use(s, f).message ?? 'Simulated item error');
    }
    const handle = `AcV${randomBytes(24).toString('base64url')}`;
    s.batches.set(handle, {
      handle,
      catalogId: c.id,
      allowUpsert: b.allow_upsert !== false,
      requests,
      createdAt: now,
      finishAt: hang ? null : now + s.batchProcessingMs,
      forcedErrors,
      applied: false,
      errors: [],
      warnings: [],
    });
    ctx.body = { handles: [handle] };
  });

  r.get('/:catalogId/check_batch_request_status', (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.check_batch_request_status += 1;
    const c = catalogOf(ctx, 'get');
    if (!c) return;
    const handle = typeof ctx.query.handle === 'string' ? ctx.query.handle : '';
    const batch = s.batches.get(handle);
    if (!batch || batch.catalogId !== c.id) return catalogueError(ctx, state, 100, `(#100) Invalid handle: ${handle}`);
    const finished = batch.applied;
    ctx.body = {
      data: [
        {
          handle,
          status: finished ? 'finished' : 'in_progress',
          errors_total_count: finished ? batch.errors.length : 0,
          warnings_total_count: finished ? batch.warnings.length : 0,
          errors: finished ? batch.errors : [],
          warnings: finished ? batch.warnings : [],
          ids_of_invalid_requests: finished ? batch.errors.map((e) => e.id) : [],
        },
      ],
    };
  });

  r.get('/:catalogId/products', (ctx) => {
    if (!admitted(ctx)) return;
    s.calls.products += 1;
    const c = catalogOf(ctx, 'get');
    if (!c) return;
    const q = ctx.query;
    const fields =
      typeof q.fields === 'string' && q.fields !== '' ? q.fields.split(',').map((f) => f.trim()) : ['id', 'retailer_id', 'name'];
    const unknown = fields.find((f) => !PRODUCT_FIELDS.includes(f));
    if (unknown) return catalogueError(ctx, state, 100, `(#100) Tried accessing nonexisting field (${unknown}) on node type (ProductItem)`);
    let limit = PRODUCTS_LIMIT_DEFAULT;
    if (typeof q.limit === 'string') {
      if (!/^\d+$/.test(q.limit) || Number(q.limit) < 1)
        return catalogueError(ctx, state, 100, '(#100) Param limit must be a positive integer');
      limit = Math.min(Number(q.limit), PRODUCTS_LIMIT_MAX);
    }
    let after = 0;
    if (typeof q.after === 'string' && q.after !== '') {
      const seq = seqOf(q.after);
      if (seq === null) return catalogueError(ctx, state, 100, '(#100) Invalid cursor');
      after = seq;
    }
    let only: Set<string> | null = null;
    if (typeof q.filter === 'string') {
      const f = retailerFilter(q.filter);
      if (typeof f === 'string') return catalogueError(ctx, state, 100, f);
      only = f;
    }
    const matching = [...c.items.values()]
      .filter((i) => i.seq > after && (only === null || only.has(i.retailerId)))
      .sort((a, b) => a.seq - b.seq);
    const page = matching.slice(0, limit);
    const data = page.map((item) => {
      const view = productView(item);
      return Object.fromEntries(fields.map((f) => [f, view[f]]));
    });
    const paging: Record<string, unknown> = {};
    if (page.length > 0) {
      paging.cursors = { before: cursorOf(page[0].seq), after: cursorOf(page[page.length - 1].seq) };
      if (matching.length > page.length) {
        const next = new URL(`${ctx.protocol}://${ctx.host}${ctx.path}`);
        for (const [k, v] of Object.entries(q))
          if (typeof v === 'string' && k !== 'after' && k !== 'access_token') next.searchParams.set(k, v);
        next.searchParams.set('limit', String(limit));
        next.searchParams.set('after', cursorOf(page[page.length - 1].seq));
        paging.next = next.toString();
      }
    }
    ctx.body = { data, paging };
  });

  return r;
}

// --- Test controls (/_sim/catalogue/…) ---------------------------------------------------------------

function batchView(b: BatchRecord): Record<string, unknown> {
  return {
    handle: b.handle,
    catalogId: b.catalogId,
    requests: b.requests.length,
    methods: b.requests.reduce<Record<string, number>>((n, q) => ({ ...n, [q.method]: (n[q.method] ?? 0) + 1 }), {}),
    retailerIds: b.requests.map((q) => q.data.id),
    status: b.applied ? 'finished' : 'in_progress',
    hanging: b.finishAt === null,
    errors: b.errors,
    warnings: b.warnings,
    createdAt: new Date(b.createdAt).toISOString(),
  };
}

/**
 * GET  /catalogue/catalogs                         every catalogue {count, catalogs}
 * GET  /catalogue/catalogs/:id/items               its items as stored (Batch API field names) and as read
 * PATCH /catalogue/catalogs/:id/items/:retailerId  changes stored fields directly (drift), Batch API names
 * DELETE /catalogue/catalogs/:id/items/:retailerId removes one remotely
 * GET  /catalogue/batches?catalogId=               items_batch calls seen {count, batches}
 * POST /catalogue/batches/:handle/finish           an in_progress handle finishes now (409 if hanging or finished)
 * GET  /catalogue/calls                            calls per endpoint, and requests carried by items_batch
 * GET|POST|DELETE /catalogue/faults                arm and clear faults (kinds: CATALOGUE_FAULT_KINDS)
 * GET|POST /catalogue/config                       {batchProcessingMs}
 */
export function registerCatalogueSim(router: Router, state: SimState): void {
  const s = state.catalogue;
  const bad = (ctx: Context, error: string, status = 400): void => {
    ctx.status = status;
    ctx.body = { error };
  };
  const catalog = (ctx: Context): CatalogueRecord | null => {
    const c = s.catalogs.get(ctx.params.catalogId ?? '');
    if (!c) bad(ctx, `no catalogue ${ctx.params.catalogId}`, 404);
    else settleDue(s, c.id);
    return c ?? null;
  };

  router.get('/catalogue/catalogs', (ctx) => {
    const list = [...s.catalogs.values()].map((c) => {
      settleDue(s, c.id);
      return { id: c.id, businessId: c.businessId, name: c.name, vertical: c.vertical, product_count: c.items.size };
    });
    ctx.body = { count: list.length, catalogs: list };
  });

  router.get('/catalogue/catalogs/:catalogId/items', (ctx) => {
    const c = catalog(ctx);
    if (!c) return;
    const items = [...c.items.values()].sort((a, b) => a.seq - b.seq).map((i) => ({ ...productView(i), data: i.data }));
    ctx.body = { count: items.length, items };
  });

  router.patch('/catalogue/catalogs/:catalogId/items/:retailerId', async (ctx) => {
    const c = catalog(ctx);
    if (!c) return;
    const item = c.items.get(ctx.params.retailerId ?? '');
    if (!item) return bad(ctx, `no item ${ctx.params.retailerId}`, 404);
    const input = await readJson(ctx);
    if (!isObj(input)) return bad(ctx, 'body must be a JSON object of Batch API fields (title, price, availability, …)');
    const unknown = Object.keys(input).find((k) => !(ITEM_FIELDS as readonly string[]).includes(k));
    if (unknown) return bad(ctx, `unknown field ${unknown}; fields: ${ITEM_FIELDS.join(', ')}`);
    item.data = { ...item.data, ...input };
    item.updatedAt = Date.now();
    ctx.body = { ...productView(item), data: item.data };
  });

  router.delete('/catalogue/catalogs/:catalogId/items/:retailerId', (ctx) => {
    const c = catalog(ctx);
    if (!c) return;
    ctx.body = { deleted: c.items.delete(ctx.params.retailerId ?? '') };
  });

  router.get('/catalogue/batches', (ctx) => {
    const only = typeof ctx.query.catalogId === 'string' ? ctx.query.catalogId : null;
    const list = [...s.batches.values()].filter((b) => only === null || b.catalogId === only);
    for (const b of list) settleDue(s, b.catalogId);
    ctx.body = { count: list.length, batches: list.map(batchView) };
  });

  // A test that must see a handle in_progress holds it with a long batchProcessingMs and finishes it
  // here, instead of racing a short processing time.
  router.post('/catalogue/batches/:handle/finish', (ctx) => {
    const b = s.batches.get(ctx.params.handle ?? '');
    if (!b) return bad(ctx, `no batch ${ctx.params.handle}`, 404);
    const now = Date.now();
    settleDue(s, b.catalogId, now);
    if (b.applied || b.finishAt === null) return bad(ctx, `the batch is ${b.applied ? 'finished' : 'hanging'}`, 409);
    b.finishAt = now;
    settleDue(s, b.catalogId, now);
    ctx.body = batchView(b);
  });

  router.get('/catalogue/calls', (ctx) => {
    ctx.body = { calls: s.calls };
  });

  router.get('/catalogue/faults', (ctx) => {
    ctx.body = { faults: s.faults.map((f) => ({ ...f })) };
  });

  router.post('/catalogue/faults', async (ctx) => {
    try {
      const fault = addCatalogueFault(s, await readJson(ctx));
      state.log.info({ fault }, 'catalogue fault armed');
      ctx.status = 201;
      ctx.body = { fault };
    } catch (err) {
      if (!(err instanceof CatalogueFaultError)) throw err;
      bad(ctx, err.message);
    }
  });

  router.delete('/catalogue/faults', (ctx) => {
    const n = s.faults.length;
    s.faults.length = 0;
    ctx.body = { cleared: n };
  });

  router.get('/catalogue/config', (ctx) => {
    ctx.body = { batchProcessingMs: s.batchProcessingMs };
  });

  router.post('/catalogue/config', async (ctx) => {
    const input = await readJson(ctx);
    const ms = isObj(input) ? input.batchProcessingMs : undefined;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return bad(ctx, 'batchProcessingMs must be a number ≥ 0');
    s.batchProcessingMs = ms;
    ctx.body = { batchProcessingMs: s.batchProcessingMs };
  });
}
