// Meta's Commerce catalogue API (Graph): the provider catalogue behind a shop's WhatsApp, Facebook
// and Instagram listings. Items go through the Batch API (`items_batch`, at most 5,000 requests a
// call, asynchronous: the answer is handles to poll with `check_batch_request_status`), and are read
// back page by page from `/{catalog_id}/products`.
import type {
  CatalogueBatchStatus,
  CatalogueItemProblem,
  CatalogueItemRequest,
  CatalogueItemSource,
  CatalogueProvider,
  PlatformItem,
} from '../types.js';
import { httpRequest, isRecord, parseRetryAfter, trimSlash, type HttpReply, type ProviderFailure, type ProviderResult } from '../http.js';

export interface WhatsAppCatalogueOptions {
  /** The Graph base, e.g. https://graph.facebook.com/v21.0 (the same one the Cloud API sends use). */
  baseUrl: string;
  accessToken: string;
  /** The Meta business that owns the catalogues (POST /{business_id}/owned_product_catalogs). */
  businessId: string;
  /** Our public address: each item links to its page in the shop, `${publicBaseUrl}/shop/<shop id>/p/<sku>`. */
  publicBaseUrl: string;
  timeoutMs?: number;
}

export const META_BATCH_MAX_REQUESTS = 5000;

/** The ProductItem fields read back (drift compares them; stock and image are read but never compared). */
export const PRODUCT_FIELDS = [
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
].join(',');

/**
 * Graph codes of a temporary condition: 2 (service unavailable), 4/17/32/613 (application, user,
 * page and custom call limits), 80004/80014 (business-use-case and catalogue batch rate limits).
 * Code 1 is Meta's "unknown error" except when it asks to shrink the request, which a retry of the
 * same request cannot fix.
 */
const RETRYABLE_CODES = new Set([2, 4, 17, 32, 613, 80004, 80014]);
// Meta sends no Retry-After on its call-count limits; its rate-limiting page advises backing off for minutes.
const RATE_LIMIT_RETRY_SECONDS = 60;
// Retailer ids per filtered products read: keeps the query string well under common URL limits.
export const RETAILER_IDS_PER_READ = 100;

/** Hundredths as Meta's price string: 1250 and USD → '12.50 USD'. */
export function metaPrice(hundredths: number, currency: string): string {
  const whole = Math.floor(hundredths / 100);
  const cents = hundredths % 100;
  return `${whole}.${String(cents).padStart(2, '0')} ${currency.toUpperCase()}`;
}

/**
 * A price string Meta shows back as hundredths and a currency: the batch form ('12.50 USD'), the
 * currency first ('USD 12.50') or a display form ('$1,234.50', currency then unknown). Null when no
 * amount can be read.
 */
export function parseMetaPrice(value: unknown): { amount: number; currency: string | null } | null {
  if (typeof value !== 'string') return null;
  const m = /(\d[\d,]*)(?:\.(\d{1,2}))?/.exec(value);
  if (!m) return null;
  const whole = Number(m[1].replace(/,/g, ''));
  if (!Number.isSafeInteger(whole)) return null;
  const cents = m[2] === undefined ? 0 : Number(m[2].padEnd(2, '0'));
  const currency = /\b([A-Z]{3})\b/.exec(value)?.[1] ?? null;
  return { amount: whole * 100 + cents, currency };
}

/**
 * The Batch API item of one product. Meta requires title, description, availability, condition,
 * price, link and image_link: a product without a description is sent with its name as the
 * description, one without a condition as new. Optional fields we do not hold are sent as null so
 * an UPDATE clears what an earlier push set (e.g. a removed sale price).
 */
export function itemData(item: CatalogueItemSource, publicBaseUrl: string): Record<string, unknown> {
  return {
    id: item.sku,
    title: item.name,
    description: item.description && item.description.trim() !== '' ? item.description : item.name,
    availability: item.availability,
    condition: item.condition ?? 'new',
    price: metaPrice(item.price, item.currency),
    sale_price: item.salePrice === null ? null : metaPrice(item.salePrice, item.currency),
    link: shopLink(publicBaseUrl, item.shopId, item.sku),
    image_link: item.imageUrl,
    brand: item.brand,
    google_product_category: item.category,
    product_type: item.productType,
    inventory: item.available === null ? null : Math.max(0, item.available),
  };
}

/** The product's page in our shop. */
export function shopLink(publicBaseUrl: string, shopId: number, sku: string): string {
  return `${trimSlash(publicBaseUrl)}/shop/${shopId}/p/${encodeURIComponent(sku)}`;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** One ProductItem of GET /{catalog_id}/products in our words. */
export function platformItemOf(p: Record<string, unknown>): PlatformItem | null {
  const providerId = str(p.id);
  const retailerId = str(p.retailer_id);
  if (!providerId || !retailerId) return null;
  const price = parseMetaPrice(p.price);
  const sale = parseMetaPrice(p.sale_price);
  return {
    providerId,
    retailerId,
    name: str(p.name),
    description: str(p.description),
    price: price?.amount ?? null,
    salePrice: sale?.amount ?? null,
    currency: str(p.currency) ?? price?.currency ?? null,
    availability: str(p.availability),
    condition: str(p.condition),
    brand: str(p.brand),
    category: str(p.category),
    productType: str(p.product_type),
    imageUrl: str(p.image_url),
  };
}

/** A Graph error answer as a retry decision: refusals are permanent, throttles and outages are not. */
export function catalogueFailure(reply: Pick<HttpReply, 'status' | 'json' | 'text' | 'headers'>): ProviderFailure {
  const err = isRecord(reply.json) && isRecord(reply.json.error) ? reply.json.error : null;
  const code = err && typeof err.code === 'number' ? err.code : null;
  const message = err && typeof err.message === 'string' ? err.message : reply.text.slice(0, 200) || `HTTP ${reply.status}`;
  const shrink = code === 1 && /reduce the amount of data/i.test(message);
  const retryable =
    !shrink &&
    (reply.status >= 500 || reply.status === 429 || reply.status === 408 || code === 1 || (code !== null && RETRYABLE_CODES.has(code)));
  const failure: ProviderFailure = {
    ok: false,
    permanent: !retryable,
    code: code !== null ? String(code) : `http_${reply.status}`,
    message,
    httpStatus: reply.status,
  };
  const rateLimited = code !== null && [4, 17, 32, 613, 80004, 80014].includes(code);
  const retryAfter = parseRetryAfter(reply.headers.get('retry-after')) ?? (rateLimited ? RATE_LIMIT_RETRY_SECONDS : undefined);
  if (retryable && retryAfter !== undefined) failure.retryAfterSeconds = retryAfter;
  return failure;
}

const invalid = (reply: HttpReply): ProviderFailure => ({
  ok: false,
  permanent: false,
  code: 'invalid_response',
  message: reply.text.slice(0, 200),
  httpStatus: reply.status,
});

const problems = (v: unknown): CatalogueItemProblem[] =>
  (Array.isArray(v) ? v : []).flatMap((e) =>
    isRecord(e) && (typeof e.id === 'string' || typeof e.id === 'number')
      ? [{ retailerId: String(e.id), message: typeof e.message === 'string' ? e.message : 'rejected by the platform' }]
      : [],
  );

export function createWhatsAppCatalogue(o: WhatsAppCatalogueOptions): CatalogueProvider {
  const base = trimSlash(o.baseUrl);
  const call = async (method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<ProviderResult<unknown>> => {
    const res = await httpRequest(
      `${base}${path}`,
      {
        method,
        headers: {
          authorization: `Bearer ${o.accessToken}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      },
      o.timeoutMs,
    );
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return catalogueFailure(reply);
    if (!isRecord(reply.json)) return invalid(reply);
    return { ok: true, value: reply.json };
  };
  const id = encodeURIComponent;

  return {
    key: 'whatsapp-cloud',
    maxRequestsPerBatch: META_BATCH_MAX_REQUESTS,

    async createCatalogue({ name, vertical }) {
      const r = await call('POST', `/${id(o.businessId)}/owned_product_catalogs`, { name, ...(vertical ? { vertical } : {}) });
      if (!r.ok) return r;
      const v = r.value as Record<string, unknown>;
      const catalogueId = typeof v.id === 'string' || typeof v.id === 'number' ? String(v.id) : null;
      if (!catalogueId) return { ok: false, permanent: false, code: 'invalid_response', message: 'no catalogue id in the answer' };
      return { ok: true, value: { catalogueId } };
    },

    upsertRequest: (item): CatalogueItemRequest => ({ method: 'UPDATE', retailerId: item.sku, data: itemData(item, o.publicBaseUrl) }),
    deleteRequest: (retailerId): CatalogueItemRequest => ({ method: 'DELETE', retailerId, data: { id: retailerId } }),

    async sendItems(catalogueId, requests) {
      if (requests.length > META_BATCH_MAX_REQUESTS) {
        return { ok: false, permanent: true, code: '1', message: `at most ${META_BATCH_MAX_REQUESTS} requests per items_batch call` };
      }
      const r = await call('POST', `/${id(catalogueId)}/items_batch`, {
        item_type: 'PRODUCT_ITEM',
        allow_upsert: true,
        requests: requests.map((q) => ({ method: q.method, data: q.data })),
      });
      if (!r.ok) return r;
      const handles = (r.value as Record<string, unknown>).handles;
      if (!Array.isArray(handles) || handles.length === 0 || handles.some((h) => typeof h !== 'string')) {
        return { ok: false, permanent: false, code: 'invalid_response', message: 'no handles in the items_batch answer' };
      }
      return { ok: true, value: { handles: handles as string[] } };
    },

    async batchStatus(catalogueId, handle) {
      const r = await call('GET', `/${id(catalogueId)}/check_batch_request_status?handle=${id(handle)}`);
      if (!r.ok) return r;
      const data = (r.value as Record<string, unknown>).data;
      const entry: unknown = Array.isArray(data) ? (data.find((d) => isRecord(d) && d.handle === handle) ?? data[0]) : undefined;
      if (!isRecord(entry)) return { ok: false, permanent: false, code: 'invalid_response', message: 'no status for the handle' };
      const status: CatalogueBatchStatus = {
        finished: entry.status === 'finished',
        errors: problems(entry.errors),
        warnings: problems(entry.warnings),
      };
      return { ok: true, value: status };
    },

    async listItems(catalogueId, page) {
      const q = new URLSearchParams({ fields: PRODUCT_FIELDS, limit: String(page.limit) });
      if (page.after) q.set('after', page.after);
      if (page.retailerIds) q.set('filter', JSON.stringify({ retailer_id: { is_any: page.retailerIds } }));
      const r = await call('GET', `/${id(catalogueId)}/products?${q.toString()}`);
      if (!r.ok) return r;
      const v = r.value as Record<string, unknown>;
      const items = (Array.isArray(v.data) ? v.data : []).flatMap((p) => {
        const item = isRecord(p) ? platformItemOf(p) : null;
        return item ? [item] : [];
      });
      const paging = isRecord(v.paging) ? v.paging : {};
      const cursors = isRecord(paging.cursors) ? paging.cursors : {};
      // Graph gives `next` only when another page exists; the after cursor alone is not that promise.
      const after = typeof paging.next === 'string' && typeof cursors.after === 'string' ? cursors.after : undefined;
      return { ok: true, value: after ? { items, after } : { items } };
    },
  };
}
