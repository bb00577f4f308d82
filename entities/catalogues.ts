import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';
import {
  AVAILABILITIES,
  CONDITIONS,
  LISTING_STATES,
  MOVEMENT_KINDS,
  SOURCES_OF_TRUTH,
  STOCK_POLICIES,
  SYNC_KINDS,
  SYNC_MODES,
  SYNC_STATUSES,
  VISIBILITIES,
  type PlatformKey,
  type SyncProblem,
  type PlatformCounts,
  type FieldDrift,
} from '../domain/catalogues/vocabulary.js';

// A shop (the contract's catalogue). `sku_seq` is the counter the shop issues skus from
// (`<prefix>-000001`, readable and sortable); `meta_catalogue_id` is the chat provider's catalogue,
// created with the shop. `channels` are the platforms the shop is published on.
export const Catalogue = defineEntity({
  name: 'Catalogue',
  tableName: 'catalogues',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    name: p.string().length(100),
    description: p.text().nullable(),
    vertical: p.string().length(64).nullable(),
    defaultCurrency: p.string().length(3).nullable(),
    metaCatalogueId: p.string().length(64).nullable(),
    channels: p.json<PlatformKey[]>(),
    skuPrefix: p.string().length(16),
    skuSeq: p.bigint('string').default(0),
    stockPolicy: p.enum(STOCK_POLICIES).default('external'),
    sourceOfTruth: p.enum(SOURCES_OF_TRUTH).default('api'),
    reservationTtlHours: p.integer().default(48),
    lowStockThreshold: p.integer().nullable(),
    allowBackorders: p.boolean().default(false),
    /** What the public shop page may take from one visitor (domain/catalogues/storefront.ts STOREFRONT_DEFAULTS). */
    maxLineQuantity: p.integer().default(10),
    maxBasketQuantity: p.integer().default(50),
    checkoutHoldMinutes: p.integer().default(15),
    addressBasketsPerHour: p.integer().default(20),
    addressOrdersPerHour: p.integer().default(10),
    ...timestamps(),
  },
  indexes: [{ properties: ['accountId', 'id'] }],
});

// Brand and category text become records of the shop on first use (unique by name per shop).
export const ProductBrand = defineEntity({
  name: 'ProductBrand',
  tableName: 'product_brands',
  properties: {
    id: p.integer().primary().autoincrement(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    name: p.string().length(255),
    createdAt: createdAt(),
  },
  uniques: [{ properties: ['catalogue', 'name'] }],
});

// `slug` addresses a category in shop links (`category` by id or slug) and on the shop page.
export const ProductCategory = defineEntity({
  name: 'ProductCategory',
  tableName: 'product_categories',
  properties: {
    id: p.integer().primary().autoincrement(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    name: p.string().length(255),
    slug: p.string().length(255).nullable(),
    createdAt: createdAt(),
  },
  uniques: [{ properties: ['catalogue', 'name'] }, { properties: ['catalogue', 'slug'] }],
});

// A product of a shop. `sku` is the identity (retailer_id is its older name, the same column);
// `revision` moves on every change a platform must see, and each listing records the revision it
// last pushed, so a push always knows whether it is stale. `inventory` null = not tracked.
// `reserved` is held by pending orders (the next issue's holds write it). A retired product
// (replace-mode sync) keeps its row for orders that name it, is off every platform and not listed.
export const Product = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    sku: p.string().length(100),
    name: p.string().length(100),
    description: p.text().nullable(),
    price: p.bigint('string'),
    salePrice: p.bigint('string').nullable(),
    currency: p.string().length(3),
    imageUrl: p.string().length(2048).nullable(),
    availability: p.enum(AVAILABILITIES),
    /** The caller chose `availability`; otherwise it follows the inventory. */
    availabilityExplicit: p.boolean().default(false),
    condition: p.enum(CONDITIONS).nullable(),
    inventory: p.integer().nullable(),
    reserved: p.integer().default(0),
    visibility: p.enum(VISIBILITIES).default('published'),
    brand: p.manyToOne(ProductBrand).nullable().deleteRule('set null'),
    category: p.manyToOne(ProductCategory).nullable().deleteRule('set null'),
    productType: p.string().length(750).nullable(),
    metaProductId: p.string().length(64).nullable(),
    revision: p.integer().default(1),
    retiredAt: p.datetime().nullable(),
    /** The day the last low-stock notice went out (at most one a day). */
    lowStockNoticedOn: p.date().nullable(),
    /**
     * The sync run that last created, changed or retired the product: what that run pushes, and its
     * retired count. Not indexed, so a re-sync's updates stay HOT (read within one shop's rows).
     */
    lastSyncId: p.bigint('string').nullable(),
    ...timestamps(),
  },
  uniques: [{ properties: ['catalogue', 'sku'] }],
  indexes: [
    // The product list: one shop's products sorted by name.
    { properties: ['catalogue', 'name', 'id'] },
    // Batch rows without a sku match on name.
    { properties: ['accountId', 'id'] },
  ],
});

// Where a product stands on one platform its shop is on. `pushed_revision` is the product revision
// the platform last accepted; `drift` the field-level differences the hourly comparison found.
export const ProductListing = defineEntity({
  name: 'ProductListing',
  tableName: 'product_listings',
  properties: {
    product: p.manyToOne(Product).deleteRule('cascade').primary(),
    platform: p.string().length(32).primary(),
    state: p.enum(LISTING_STATES).default('pending'),
    problem: p.text().nullable(),
    drift: p.json<FieldDrift[]>().nullable(),
    platformItemId: p.string().length(64).nullable(),
    pushedRevision: p.integer().default(0),
    checkedAt: p.datetime().nullable(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});

// One sync run: a product batch, a feed pull or a spreadsheet import. Accepted (202) with its rows
// staged in catalogue_sync_pages in the same transaction, so the run survives any restart; the
// report fields are the contract's.
export const CatalogueSync = defineEntity({
  name: 'CatalogueSync',
  tableName: 'catalogue_syncs',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    kind: p.enum(SYNC_KINDS),
    feedId: p.integer().nullable(),
    mode: p.enum(SYNC_MODES).default('upsert'),
    status: p.enum(SYNC_STATUSES).default('queued'),
    idempotencyKey: p.string().length(255).nullable(),
    /** SHA-256 of the request body: the same key with another body is a conflict. */
    requestHash: p.string().length(64).nullable(),
    received: p.integer().default(0),
    created: p.integer().default(0),
    updated: p.integer().default(0),
    rejected: p.integer().default(0),
    retired: p.integer().default(0),
    platforms: p.json<Record<string, PlatformCounts>>(),
    problems: p.json<SyncProblem[]>(),
    problemsTruncated: p.boolean().default(false),
    failureReason: p.text().nullable(),
    /**
     * The products the run's rows landed on, `{ "<product id>": <row> }`, kept as the rows are applied:
     * an earlier row of the payload that named a product, and what replace mode keeps. The last chunk
     * of an upsert run does not add to it (nothing reads it after).
     */
    landed: p.json<Record<string, number>>().default('{}'),
    /** The last staged row applied (the cursor): a chunk moves it with the products it wrote. */
    appliedThrough: p.integer().default(0),
    createdAt: createdAt(),
    startedAt: p.datetime().nullable(),
    finishedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['catalogue', 'idempotencyKey'] }],
  indexes: [
    { properties: ['catalogue', 'id'] },
    // A feed's runs: the one under way (one pull at a time), the latest.
    { properties: ['feedId', 'id'] },
  ],
});

// The rows of a sync run waiting to be applied, as pages: a batch is one page, a feed pull one page
// per staged chunk. Row `first_row + i` is element i of `rows`; the run's applied_through is the
// cursor, and the pages go when the run ends. json with storage external (migration 20261124190500):
// kept as sent, neither parsed into jsonb nor compressed.
export const CatalogueSyncPage = defineEntity({
  name: 'CatalogueSyncPage',
  tableName: 'catalogue_sync_pages',
  properties: {
    sync: p.manyToOne(CatalogueSync).deleteRule('cascade').primary(),
    firstRow: p.integer().primary(),
    rowCount: p.integer(),
    rows: p.json<unknown[]>().columnType('json'),
  },
});

// A product feed pulled from a URL on a schedule (a Temporal Schedule per feed).
export const CatalogueFeed = defineEntity({
  name: 'CatalogueFeed',
  tableName: 'catalogue_feeds',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    url: p.string().length(2048),
    schedule: p.string().length(64).nullable(),
    mapping: p.json<Record<string, string>>(),
    mode: p.enum(SYNC_MODES).default('replace'),
    format: p.string().length(8).nullable(),
    enabled: p.boolean().default(true),
    consecutiveFailures: p.integer().default(0),
    lastSyncId: p.bigint('string').nullable(),
    /** Rows of the last completed pull: a replace pull that shrinks sharply is refused against it. */
    lastRowCount: p.integer().nullable(),
    /** The last run whose outcome the failure count took in: a retried tally counts a run once. */
    countedSyncId: p.bigint('string').nullable(),
    ...timestamps(),
  },
  indexes: [{ properties: ['catalogue', 'id'] }],
});

// The stock ledger: append-only, one row per change of a product's inventory or reserved figure
// (pushes, adjustments, and the next issue's holds, releases and commits), newest first on read.
export const StockMovement = defineEntity({
  name: 'StockMovement',
  tableName: 'stock_movements',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    product: p.manyToOne(Product).deleteRule('cascade'),
    kind: p.enum(MOVEMENT_KINDS),
    quantity: p.integer(),
    inventoryAfter: p.integer().nullable(),
    reservedAfter: p.integer(),
    availableAfter: p.integer().nullable(),
    cause: p.json<Record<string, unknown>>(),
    createdAt: createdAt(),
  },
  indexes: [{ properties: ['product', 'id'] }],
});

// A platform push a stock change owes (the inventory push): written in the transaction of the
// change, started after the commit and marked started; the worker's reconciler starts any left
// unstarted (a process that died between commit and start). `push_id` names the workflow, so a
// second start of the same request is refused by Temporal and changes nothing.
export const ProductPushRequest = defineEntity({
  name: 'ProductPushRequest',
  tableName: 'product_push_requests',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    accountId: p.integer(),
    catalogue: p.manyToOne(Catalogue).deleteRule('cascade'),
    pushId: p.string().length(100).unique(),
    productIds: p.json<number[]>(),
    cause: p.json<Record<string, unknown>>(),
    createdAt: createdAt(),
    startedAt: p.datetime().nullable(),
  },
  indexes: [{ properties: ['startedAt', 'id'] }],
});

/** A named, priced option of a product: sizes and add-ons have the same shape and differ in how the price counts. */
const productOption = <N extends string, T extends string>(name: N, tableName: T) =>
  defineEntity({
    name,
    tableName,
    properties: {
      id: p.bigint('string').primary().autoincrement(),
      product: p.manyToOne(Product).deleteRule('cascade'),
      name: p.string().length(100),
      /** Hundredths: a size's price replaces the product's, an add-on's is added to the line's. */
      price: p.bigint('string'),
      position: p.integer().default(0),
      createdAt: createdAt(),
    },
    uniques: [{ properties: ['product', 'name'] }],
  });

// A size (the contract: "sizes are variants with their own price that replaces the product price").
export const ProductVariant = productOption('ProductVariant', 'product_variants');
// An add-on of a product ("add-ons each add to the price").
export const ProductAddon = productOption('ProductAddon', 'product_addons');
