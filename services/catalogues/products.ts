import type { FromSchema } from 'json-schema-to-ts';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RequestContext } from '../platform/context.js';
import { DomainError, notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { pageAnswer } from '../platform/pagination.js';
import { emitEvent } from '../webhooks/index.js';
import { executeUpdateWithStart } from '../../temporal/starters.js';
import { productPushStarter } from '../../workflows/catalogues/product-push.starter.js';
import {
  availabilityOnWrite,
  availableOf,
  changedFields,
  issuedSkuCandidates,
  listPage,
  nextIssuedSku,
  skuFrozen,
  skuOfCreate,
} from '../../domain/catalogues/product-input.js';
import { CATALOGUE_LIMITS, type Availability, type PlatformKey } from '../../domain/catalogues/vocabulary.js';
import type { productBySkuBody, productCreateBody, productListQuery, productUpdateBody } from './product-schemas.js';
import { requireShop, type ShopRow } from './shops.js';
import { brandAndCategoryIds, dropUnusedRecords, isUniqueViolation, type RecordIds } from './product-write.js';
import { productEventFields, productViews, type ProductView } from './product-view.js';
import {
  addListings as addListingRows,
  deleteProductRow,
  insertProductRow,
  isListed,
  listingsOfProduct,
  markListingsPending,
  productOfShop,
  productOfSku,
  productPage,
  replaceOptionRows,
  restoreListings,
  restoreProductRow,
  setSkuCounter,
  skuCounter,
  skuTaken,
  takenSkus,
  updateProductRow,
  type ListingRow,
  type ProductRow,
} from './store/products.js';
import { TIMED_OUT, providerRefusal, within, type CatalogueDeps } from './catalogues.js';
import type { ProductWrite } from '../../domain/catalogues/sync.js';

// Products of a shop: list, read, create, PUT, delete, and the same by sku. Every write stores the
// row and its listings in one transaction, then hands the revision to the product push workflow and
// waits for the platforms' answer: a refusal undoes the write next to it and answers 502, so a
// refused product is never left half-written.

export type ProductCreateInput = FromSchema<typeof productCreateBody>;
/** Any recognized product field (the by-sku body carries them all; the PUT schema refuses three). */
export type ProductFields = Partial<FromSchema<typeof productBySkuBody>>;
/** The PUT body's fields: its schema refuses retailer_id, product_type and visibility (`not: {}`), so they never arrive. */
export type ProductUpdate = Omit<FromSchema<typeof productUpdateBody>, 'retailer_id' | 'product_type' | 'visibility'>;

/** How long a write waits for the platforms; past it the product answers as it stands (listings pending or syncing). */
export const PUSH_WAIT_MS = 15_000;

export type ProductListQuery = FromSchema<typeof productListQuery>;

/** The shop's products sorted by name; search matches name or retailer_id (sku), any case. Retired products are not listed. */
export async function listProducts(rc: RequestContext, shopRef: string, q: ProductListQuery) {
  const shop = await requireShop(rc, shopRef);
  const { page, perPage, offset } = listPage(q);
  const { total, ids } = await productPage(
    rc.em,
    shop.id,
    { search: q.search?.trim() || undefined, availability: q.availability },
    perPage,
    offset,
  );
  return pageAnswer('products', await productViews(rc.em, ids), { page, perPage }, total);
}

/** A product of the shop by its numeric id (404 for anything else, another shop's or tenant's included). */
export async function getProduct(rc: RequestContext, shopRef: string, productRef: string) {
  const shop = await requireShop(rc, shopRef);
  const row = await productById(rc.em, shop, productRef);
  return (await productViews(rc.em, [Number(row.id)]))[0];
}

export async function getProductBySku(rc: RequestContext, shopRef: string, sku: string) {
  const shop = await requireShop(rc, shopRef);
  const row = await productBySku(rc.em, shop, sku);
  if (!row) throw notFound('Product');
  return (await productViews(rc.em, [Number(row.id)]))[0];
}

async function productById(em: EntityManager, shop: ShopRow, ref: string, forUpdate = false): Promise<ProductRow> {
  const id = /^\d{1,15}$/.test(ref) ? Number(ref) : NaN;
  const row = Number.isSafeInteger(id) && id > 0 ? await productOfShop(em, id, shop.id, shop.account_id, forUpdate) : null;
  if (!row) throw notFound('Product');
  return row;
}

async function productBySku(em: EntityManager, shop: ShopRow, sku: string, forUpdate = false): Promise<ProductRow | null> {
  if (sku.length > CATALOGUE_LIMITS.skuMax) return null;
  return productOfSku(em, shop.id, sku, forUpdate);
}

// ---------------------------------------------------------------------------------------------
// Writes

/** What a committed write left for its push: enough to undo it when a platform refuses. */
interface Written {
  kind: 'created' | 'updated';
  shop: ShopRow;
  productId: number;
  revision: number;
  hasListings: boolean;
  records: RecordIds['created'];
  /** Updates: the row and listings before the write, and the fields it changed. */
  before?: ProductRow;
  beforeListings?: ListingRow[];
  changed?: string[];
  /** Nothing to change: no push, no event. */
  unchanged?: boolean;
}

export async function createProduct(rc: RequestContext, deps: CatalogueDeps, shopRef: string, body: ProductCreateInput) {
  const { sku, errors } = skuOfCreate(body);
  if (errors) throw validationFailed(errors);
  const written = await inTransaction(rc, async (tx) => {
    const shop = await requireShop({ ...rc, em: tx }, shopRef, { forUpdate: true });
    return insertProduct(tx, rc, shop, sku, body, body.retailer_id !== undefined && body.sku === undefined ? 'retailer_id' : 'sku');
  });
  return publish(rc, deps, written);
}

/** PUT: the recognized fields sent change; the others stay. retailer_id, product_type and visibility are refused by the schema. */
export async function updateProduct(rc: RequestContext, deps: CatalogueDeps, shopRef: string, productRef: string, body: ProductUpdate) {
  const written = await inTransaction(rc, async (tx) => {
    const shop = await requireShop({ ...rc, em: tx }, shopRef);
    const row = await productById(tx, shop, productRef, true);
    return changeProduct(tx, shop, row, body);
  });
  return publish(rc, deps, written);
}

/**
 * PUT by sku: creates the product when the shop has no such sku (name and price then required),
 * otherwise changes only the fields sent. A body sku or retailer_id must equal the path's. A
 * retired product named again comes back.
 */
export async function putProductBySku(rc: RequestContext, deps: CatalogueDeps, shopRef: string, pathSku: string, body: ProductFields) {
  const problems: FieldErrors = {};
  if (pathSku.length > CATALOGUE_LIMITS.skuMax) problems.sku = [`The sku may not be greater than ${CATALOGUE_LIMITS.skuMax} characters.`];
  if (body.sku !== undefined && body.sku !== pathSku) problems.sku = ['The sku in the body must equal the sku in the path.'];
  if (body.retailer_id !== undefined && body.retailer_id !== pathSku)
    problems.retailer_id = ['The retailer id must equal the sku in the path: it is the older name of the same value.'];
  if (Object.keys(problems).length) throw validationFailed(problems);
  const { sku: _s, retailer_id: _r, ...fields } = body;
  const written = await inTransaction(rc, async (tx) => {
    const shop = await requireShop({ ...rc, em: tx }, shopRef, { forUpdate: true });
    const row = await productBySku(tx, shop, pathSku, true);
    if (!row) {
      const missing: FieldErrors = {};
      if (fields.name === undefined) missing.name = ['The name field is required.'];
      if (fields.price === undefined) missing.price = ['The price field is required.'];
      if (Object.keys(missing).length) throw validationFailed(missing);
      return insertProduct(tx, rc, shop, pathSku, fields as ProductCreateInput, 'sku');
    }
    const createOnly: FieldErrors = {};
    if (fields.product_type !== undefined && fields.product_type !== row.product_type)
      createOnly.product_type = ['The product type is accepted on create only.'];
    if (fields.visibility !== undefined && fields.visibility !== row.visibility)
      createOnly.visibility = ['The visibility is accepted on create only.'];
    if (Object.keys(createOnly).length) throw validationFailed(createOnly);
    const { product_type: _t, visibility: _v, ...changeable } = fields;
    return changeProduct(tx, shop, row, changeable, { revive: true });
  });
  return publish(rc, deps, written);
}

/** The columns a write sets, derived from the body (and, for a change, the row as it stands): the batch's fields, with brand and category as record ids. */
type Columns = Omit<ProductWrite, 'brand' | 'category'> & { brand_id: number | null; category_id: number | null };

const trimmedOrNull = (s: string | null | undefined) => (s === undefined || s === null ? null : s.trim() === '' ? null : s);

async function insertProduct(
  tx: EntityManager,
  rc: RequestContext,
  shop: ShopRow,
  chosenSku: string | undefined,
  body: ProductCreateInput,
  skuField: 'sku' | 'retailer_id',
): Promise<Written> {
  let sku = chosenSku;
  if (sku !== undefined) {
    if (await skuTaken(tx, shop.id, sku)) throw duplicateSku(skuField);
  } else {
    sku = await issueSku(tx, shop);
  }
  const ids = await brandAndCategoryIds(tx, shop.id, body.brand, body.category);
  const inventory = body.inventory ?? null;
  const cols: Columns = {
    sku,
    name: body.name.trim() === '' ? refuse('name', 'The name field is required.') : body.name.trim(),
    description: trimmedOrNull(body.description),
    price: body.price,
    sale_price: body.sale_price ?? null,
    currency: (body.currency ?? shop.default_currency ?? rc.account.currency).toUpperCase(),
    image_url: trimmedOrNull(body.image_url),
    ...availabilityColumns(availabilityOnWrite(body.availability, null, availableOf(inventory, 0), shop.allow_backorders)),
    condition: body.condition ?? null,
    inventory,
    visibility: body.visibility ?? 'published',
    brand_id: ids.brandId ?? null,
    category_id: ids.categoryId ?? null,
    product_type: trimmedOrNull(body.product_type),
  };
  let productId: number;
  try {
    productId = await insertProductRow(tx, shop.account_id, shop.id, cols);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateSku(skuField);
    throw err;
  }
  await replaceOptions(tx, productId, body);
  await addListings(tx, productId, shop.channels);
  const written: Written = { kind: 'created', shop, productId, revision: 1, hasListings: shop.channels.length > 0, records: ids.created };
  if (!written.hasListings) await emitProductEvent(tx, written);
  return written;
}

/** The shop's next sku past its counter and past any sku a caller chose, the counter moved on (the shop row is locked). */
async function issueSku(tx: EntityManager, shop: ShopRow): Promise<string> {
  let seq = await skuCounter(tx, shop.id);
  for (;;) {
    const candidates = issuedSkuCandidates(shop.sku_prefix, seq, 32);
    const taken = await takenSkus(tx, shop.id, candidates);
    const next = nextIssuedSku(shop.sku_prefix, seq, (s) => taken.has(s));
    if (next.seq <= seq + candidates.length) {
      await setSkuCounter(tx, shop.id, next.seq);
      return next.sku;
    }
    seq += candidates.length;
  }
}

async function changeProduct(
  tx: EntityManager,
  shop: ShopRow,
  row: ProductRow,
  body: ProductFields,
  o: { revive?: boolean } = {},
): Promise<Written> {
  await replaceOptions(tx, Number(row.id), body);
  const ids = await brandAndCategoryIds(tx, shop.id, body.brand, body.category);
  const current = columnsOf(row);
  const inventory = body.inventory !== undefined ? body.inventory : current.inventory;
  const next: Columns = {
    ...current,
    ...(body.sku !== undefined ? { sku: body.sku } : {}),
    ...(body.name !== undefined
      ? { name: body.name.trim() === '' ? refuse('name', 'The name field is required.') : body.name.trim() }
      : {}),
    ...(body.description !== undefined ? { description: trimmedOrNull(body.description) } : {}),
    ...(body.price !== undefined ? { price: body.price } : {}),
    ...(body.sale_price !== undefined ? { sale_price: body.sale_price } : {}),
    ...(body.currency !== undefined ? { currency: body.currency.toUpperCase() } : {}),
    ...(body.image_url !== undefined ? { image_url: trimmedOrNull(body.image_url) } : {}),
    ...(body.condition !== undefined ? { condition: body.condition } : {}),
    inventory,
    ...(ids.brandId !== undefined ? { brand_id: ids.brandId } : {}),
    ...(ids.categoryId !== undefined ? { category_id: ids.categoryId } : {}),
    ...availabilityColumns(
      availabilityOnWrite(
        body.availability,
        { availability: current.availability, explicit: current.availability_explicit },
        availableOf(inventory, row.reserved),
        shop.allow_backorders,
      ),
    ),
  };
  const changed = changedFields(current as unknown as Record<string, unknown>, next as unknown as Partial<Record<string, unknown>>);
  const revive = o.revive === true && row.retired_at !== null;
  const listings = await listingsOfProduct(tx, row.id);
  const base = { shop, productId: Number(row.id), records: ids.created };
  if (!changed.length && !revive) {
    await dropUnusedRecords(tx, ids.created);
    return { ...base, kind: 'updated', revision: row.revision, hasListings: listings.length > 0, unchanged: true, records: {} };
  }
  if (changed.includes('sku')) {
    if (skuFrozen(listings.map((l) => ({ pushedRevision: l.pushed_revision }))))
      throw new DomainError('conflict', 'The sku is frozen: the product is live on a platform, which knows it by this sku.', {
        errors: { sku: ['The sku cannot change once the product is live on any platform.'] },
        reason: 'sku_frozen',
      });
    if (await skuTaken(tx, shop.id, next.sku, row.id)) throw duplicateSku('sku');
  }
  const revision = row.revision + 1;
  try {
    await updateProductRow(tx, row.id, next, revision, revive);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateSku('sku');
    throw err;
  }
  // The platforms must see the new revision: every listing waits for the push again.
  await markListingsPending(tx, row.id);
  await addListings(tx, Number(row.id), shop.channels);
  const hasListings = listings.length > 0 || shop.channels.length > 0;
  const written: Written = {
    ...base,
    kind: 'updated',
    revision,
    hasListings,
    before: row,
    beforeListings: listings,
    changed: revive ? [...changed, 'retired_at'] : changed,
  };
  if (!hasListings) await emitProductEvent(tx, written);
  return written;
}

type OptionInput = ReadonlyArray<{ name: string; price: number }>;

/**
 * Sizes and add-ons sent replace the product's whole lists (their ids are new: a basket line keeps
 * the price it was given); omitted, they stay. Names are unique per product in any case, as the
 * shop link matches them. The platforms are not told: sizes and add-ons live on the shop page only.
 */
async function replaceOptions(tx: EntityManager, productId: number, body: { variants?: OptionInput; addons?: OptionInput }): Promise<void> {
  for (const [field, table, what] of [
    ['variants', 'product_variants', 'size'],
    ['addons', 'product_addons', 'add-on'],
  ] as const) {
    const list = body[field];
    if (list === undefined) continue;
    const names = list.map((o) => o.name.trim());
    if (names.some((n) => n === '')) refuse(field, `Every ${what} needs a name.`);
    if (new Set(names.map((n) => n.toLowerCase())).size !== names.length) refuse(field, `The ${what} names of a product must be unique.`);
    await replaceOptionRows(
      tx,
      table,
      productId,
      list.map((o, position) => ({ name: names[position], price: o.price, position })),
    );
  }
}

const availabilityColumns = (a: { availability: Availability; explicit: boolean }) => ({
  availability: a.availability,
  availability_explicit: a.explicit,
});

function columnsOf(r: ProductRow): Columns {
  return {
    sku: r.sku,
    name: r.name,
    description: r.description,
    price: Number(r.price),
    sale_price: r.sale_price === null ? null : Number(r.sale_price),
    currency: r.currency,
    image_url: r.image_url,
    availability: r.availability,
    availability_explicit: r.availability_explicit,
    condition: r.condition,
    inventory: r.inventory,
    visibility: r.visibility,
    brand_id: r.brand_id,
    category_id: r.category_id,
    product_type: r.product_type,
  };
}

async function addListings(tx: EntityManager, productId: number, channels: readonly PlatformKey[]): Promise<void> {
  if (!channels.length) return;
  await addListingRows(tx, productId, channels);
}

const duplicateSku = (field: 'sku' | 'retailer_id') =>
  validationFailed({ [field]: [`The ${field === 'sku' ? 'sku' : 'retailer id'} has already been taken in this catalogue.`] });

function refuse(field: string, message: string): never {
  throw validationFailed({ [field]: [message] });
}

/** A write's transaction; a unique-value race that slipped past the checks is the caller's 422, never a 500. */
async function inTransaction(rc: RequestContext, fn: (tx: EntityManager) => Promise<Written>): Promise<Written> {
  try {
    return await rc.em.transactional(fn);
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateSku('sku');
    throw err;
  }
}

/**
 * After the commit: the push workflow takes the new revision to every platform and answers once
 * they accepted or one refused. Refused: the write is undone and the answer is 502. No answer within
 * PUSH_WAIT_MS: the product answers as it stands and the push finishes in the background.
 */
async function publish(rc: RequestContext, deps: CatalogueDeps, w: Written): Promise<ProductView> {
  if (w.hasListings && !w.unchanged) {
    let outcome: PushOutcome | typeof TIMED_OUT;
    try {
      outcome = await within(pushRevision(deps, rc.account.id, w.shop.id, w.productId, { revision: w.revision }), PUSH_WAIT_MS);
    } catch (err) {
      const refused = providerRefusal(err);
      await undo(rc, w);
      if (refused !== undefined) throw refusedBy(undefined, refused);
      throw err;
    }
    if (outcome === TIMED_OUT)
      rc.log.warn({ product: w.productId, revision: w.revision }, 'product push still running; answering as it stands');
    else if (!outcome.accepted) {
      await undo(rc, w);
      throw refusedBy(outcome.refused?.platform, outcome.refused?.message);
    }
    await emitProductEvent(rc.em, w);
  }
  return (await productViews(rc.em, [w.productId]))[0];
}

type PushOutcome = Awaited<ReturnType<typeof pushRevision>>;

function pushRevision(
  deps: CatalogueDeps,
  accountId: number,
  catalogueId: number,
  productId: number,
  update: { revision: number; remove?: boolean },
) {
  return executeUpdateWithStart(
    deps,
    productPushStarter,
    { accountId, productId },
    [{ accountId, catalogueId, productId }],
    'pushRevision',
    [update],
  );
}

function refusedBy(platform: string | undefined, message: string | undefined): DomainError {
  const who = platform ? `The ${platform} platform` : 'The platform';
  return new DomainError('provider_failure', `${who} refused the product${message ? `: ${message}` : '.'}`, { reason: 'provider_refused' });
}

/**
 * Undoes a refused write next to it: a create is removed, a change is put back as it was (unless a
 * later write moved it on). The revision moves on rather than back: the push workflow counts the
 * refused revision as handled, so a retry reusing its number would be answered with the old refusal.
 */
async function undo(rc: RequestContext, w: Written): Promise<void> {
  await rc.em.transactional(async (tx) => {
    if (w.kind === 'created') {
      await deleteProductRow(tx, w.productId);
    } else if (w.before) {
      const b = columnsOf(w.before);
      const restored = await restoreProductRow(tx, w.productId, b, {
        revision: w.revision + 1,
        retiredAt: w.before.retired_at,
        updatedAt: w.before.updated_at,
        ifRevision: w.revision,
      });
      if (restored) await restoreListings(tx, w.productId, w.beforeListings ?? []);
    }
    await dropUnusedRecords(tx, w.records);
  });
}

async function emitProductEvent(em: EntityManager, w: Written): Promise<void> {
  const [view] = await productViews(em, [w.productId]);
  if (!view) return;
  if (w.kind === 'created') await emitEvent(em, w.shop.account_id, 'product.created', productEventFields(view));
  else await emitEvent(em, w.shop.account_id, 'product.updated', { ...productEventFields(view), changed: w.changed ?? [] });
}

// ---------------------------------------------------------------------------------------------
// Deletes

export async function deleteProduct(rc: RequestContext, deps: CatalogueDeps, shopRef: string, productRef: string) {
  const shop = await requireShop(rc, shopRef);
  return removeProduct(rc, deps, shop, await productById(rc.em, shop, productRef));
}

export async function deleteProductBySku(rc: RequestContext, deps: CatalogueDeps, shopRef: string, sku: string) {
  const shop = await requireShop(rc, shopRef);
  const row = await productBySku(rc.em, shop, sku);
  if (!row) throw notFound('Product');
  return removeProduct(rc, deps, shop, row);
}

/**
 * Removes the product from every platform it is listed on, then from the shop. A refusal keeps the
 * product (502); when the platforms have not answered within the wait the product is kept too and
 * the answer says to repeat the delete (the removal carries on and a repeat confirms it).
 */
async function removeProduct(rc: RequestContext, deps: CatalogueDeps, shop: ShopRow, row: ProductRow) {
  const productId = Number(row.id);
  const listed = await isListed(rc.em, productId);
  if (listed) {
    let outcome: PushOutcome | typeof TIMED_OUT;
    try {
      outcome = await within(pushRevision(deps, rc.account.id, shop.id, productId, { revision: row.revision, remove: true }), PUSH_WAIT_MS);
    } catch (err) {
      const refused = providerRefusal(err);
      if (refused !== undefined) throw refusedBy(undefined, refused);
      throw err;
    }
    if (outcome === TIMED_OUT)
      throw new DomainError(
        'conflict',
        'The platforms have not confirmed the removal yet; the product is kept. Repeat the delete to finish it.',
        {
          reason: 'removal_pending',
        },
      );
    if (!outcome.accepted) throw refusedBy(outcome.refused?.platform, outcome.refused?.message);
  }
  await rc.em.transactional(async (tx) => {
    const [view] = await productViews(tx, [productId]);
    if (!view) return;
    await deleteProductRow(tx, productId);
    await emitEvent(tx, shop.account_id, 'product.deleted', productEventFields(view));
  });
  return { id: productId, sku: row.sku, deleted: true as const };
}
