// The words of the contract's catalogue family (Resources > Catalogue, Product, Sync run report,
// Inventory row and movement; States > Product listing, Sync run), shared by every layer.

export const STOCK_POLICIES = ['external', 'svc'] as const;
export type StockPolicy = (typeof STOCK_POLICIES)[number];

export const SOURCES_OF_TRUTH = ['api', 'svc', 'platform'] as const;
export type SourceOfTruth = (typeof SOURCES_OF_TRUTH)[number];

export const AVAILABILITIES = ['in stock', 'out of stock', 'preorder', 'available for order', 'discontinued'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

export const CONDITIONS = ['new', 'refurbished', 'used'] as const;
export type Condition = (typeof CONDITIONS)[number];

export const VISIBILITIES = ['staging', 'published'] as const;
export type Visibility = (typeof VISIBILITIES)[number];

export const LISTING_STATES = ['pending', 'syncing', 'synced', 'failed', 'blocked', 'drifted'] as const;
export type ListingState = (typeof LISTING_STATES)[number];

export const SYNC_KINDS = ['batch', 'feed', 'import'] as const;
export type SyncKind = (typeof SYNC_KINDS)[number];

export const SYNC_MODES = ['upsert', 'replace'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

/** queued and running are ours (a run between acceptance and its end); the contract shows the two ends. */
export const SYNC_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];

export const MOVEMENT_KINDS = ['reserve', 'release', 'commit', 'adjust', 'sync'] as const;
export type MovementKind = (typeof MOVEMENT_KINDS)[number];

/**
 * The platforms a shop can be published on (`channels[]`, one listing per product and platform):
 * `whatsapp` is the chat provider's commerce catalogue (Meta's, shared by WhatsApp, Facebook and
 * Instagram shops), pushed through its Batch API; `storefront` is the service's own shop page,
 * listed locally. See platforms.ts for what each needs.
 */
export const PLATFORMS = ['whatsapp', 'storefront'] as const;
export type PlatformKey = (typeof PLATFORMS)[number];

/** One problem of a sync run: `stage` is `ingest` (row not stored) or a platform name (stored, not shown there). */
export type SyncProblem = {
  sku: string | null;
  stage: 'ingest' | PlatformKey;
  reason: string;
  /** 1-based row of the payload or file, when the problem is about one (ours, beside the contract's three). */
  row?: number;
  field?: string;
};

export type PlatformCounts = {
  synced: number;
  blocked: number;
};

/** One field a platform copy differs in (the hourly drift comparison). */
export type FieldDrift = {
  field: string;
  ours: unknown;
  theirs: unknown;
};

/** The contract's limits of this family (Limits: Product, Batch sync, Inventory push, Feed). */
export const CATALOGUE_LIMITS = {
  skuMax: 100,
  nameMax: 100,
  descriptionMax: 5000,
  imageUrlMax: 2048,
  brandMax: 255,
  categoryMax: 255,
  productTypeMax: 750,
  batchRows: 5000,
  inventoryRows: 5000,
  problemsKept: 200,
  feedFailuresBeforeOff: 10,
  /** Our cap on price and sale_price: 10^13 hundredths fits a bigint column and every JSON number exactly. */
  priceMax: 10_000_000_000_000,
  /** Our cap on inventory: an int column (Shopify caps at 2,000,000,000 too). */
  inventoryMax: 2_000_000_000,
  pageDefault: 25,
  pageMax: 100,
} as const;
