import {
  AVAILABILITIES,
  CATALOGUE_LIMITS as L,
  CONDITIONS,
  PLATFORMS,
  LISTING_STATES,
  VISIBILITIES,
} from '../../domain/catalogues/vocabulary.js';

// The product fields as the contract states them (Resources > Product, Limits > Product), written
// once: the create, PUT and by-sku bodies, a batch or feed row, and the product answer are all built
// from these, so a field refused on create is refused the same way (same words) in a batch row.

const nullableText = (maxLength: number, description?: string) =>
  ({ type: ['string', 'null'], maxLength, ...(description ? { description } : {}) }) as const;
const money = (description: string) => ({ type: 'integer', minimum: 0, maximum: L.priceMax, description }) as const;

/** Every writable product field (retailer_id, product_type and visibility are create-only; see the bodies). */
export const productFieldProperties = {
  sku: {
    type: 'string',
    minLength: 1,
    maxLength: L.skuMax,
    description: 'the product identity; issued by the shop (prefix-digits) when omitted; frozen once live on any platform',
  },
  retailer_id: { type: 'string', minLength: 1, maxLength: L.skuMax, description: 'older name of sku, kept in step with it' },
  name: { type: 'string', minLength: 1, maxLength: L.nameMax },
  description: nullableText(L.descriptionMax),
  price: money('hundredths of the currency'),
  sale_price: { ...money('hundredths of the currency'), type: ['integer', 'null'] },
  currency: { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217; defaults to the shop currency' },
  image_url: { ...nullableText(L.imageUrlMax), format: 'uri' },
  availability: {
    enum: [...AVAILABILITIES, null],
    description: 'derived from inventory when omitted or null (0 → out of stock unless the shop allows backorders); an explicit value wins',
  },
  condition: { enum: [...CONDITIONS, null] },
  inventory: {
    type: ['integer', 'null'],
    minimum: 0,
    maximum: L.inventoryMax,
    description: 'on hand; null (or never set) means not tracked: nothing is held back or refused',
  },
  visibility: { enum: [...VISIBILITIES], description: 'accepted on create only; default published' },
  brand: nullableText(L.brandMax, 'becomes a brand record of the shop on first use'),
  category: nullableText(L.categoryMax, 'becomes a category record of the shop on first use'),
  product_type: nullableText(L.productTypeMax, 'accepted on create only'),
} as const;

const { retailer_id: _r, product_type: _t, visibility: _v, ...updatable } = productFieldProperties;

/** Sizes or add-ons one product may have (a menu item, not a variant matrix). */
const OPTIONS_MAX = 50;

const optionList = (description: string) =>
  ({
    type: 'array',
    maxItems: OPTIONS_MAX,
    description,
    items: {
      type: 'object',
      required: ['name', 'price'],
      properties: { name: { type: 'string', minLength: 1, maxLength: L.nameMax }, price: money('hundredths of the currency') },
      additionalProperties: false,
    },
  }) as const;

/**
 * Sizes and add-ons (shop baskets, notes §2.7) on the single-product writes: the list sent replaces
 * the product's whole list ([] removes them all); omitted, the product keeps its own.
 */
export const productOptionProperties = {
  variants: optionList("sizes, each with its own price that replaces the product's price; names unique per product"),
  addons: optionList('add-ons, each adding its price to the line; names unique per product'),
} as const;

/** POST …/products: name and price required. */
export const productCreateBody = {
  type: 'object',
  required: ['name', 'price'],
  properties: { ...productFieldProperties, ...productOptionProperties },
  additionalProperties: false,
} as const;

/** PUT …/products/{product}: the recognized fields sent; retailer_id, product_type and visibility are refused. */
export const productUpdateBody = {
  type: 'object',
  properties: {
    ...updatable,
    ...productOptionProperties,
    retailer_id: { not: {}, 'x-error': 'The retailer id cannot be changed here; it follows the sku.' },
    product_type: { not: {}, 'x-error': 'The product type is accepted on create only.' },
    visibility: { not: {}, 'x-error': 'The visibility is accepted on create only.' },
  },
  additionalProperties: false,
} as const;

/** PUT …/products/by-sku/{sku}: creates the product when absent (then name and price are needed) and touches only the sent fields. */
export const productBySkuBody = {
  type: 'object',
  properties: {
    ...productFieldProperties,
    ...productOptionProperties,
    sku: { ...productFieldProperties.sku, description: 'must equal the path sku when sent' },
  },
  additionalProperties: false,
} as const;

/** GET …/products: a search, an availability, and the page. */
export const productListQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 191, description: 'matches the name or the retailer_id (sku), any case' },
    availability: { enum: [...AVAILABILITIES], description: 'only products with this availability' },
    page: { type: 'integer', description: 'from 1; a nonpositive page reads as 1' },
    per_page: { type: 'integer', description: 'default 25, at most 100; a nonpositive value reads as the default' },
    limit: { type: 'integer', description: 'wins over per_page; default 25, at most 100; a nonpositive value reads as the default' },
  },
} as const;

/**
 * One row of a batch or a mapped feed row: every documented field; sku when sent is the match key,
 * else name. Checked row by row (a bad row is one rejected row with stage ingest, the rest land).
 */
export const productRowSchema = {
  type: 'object',
  required: ['name', 'price'],
  properties: productFieldProperties,
  additionalProperties: false,
} as const;

export const listingSchema = {
  type: 'object',
  required: ['platform', 'state', 'problem', 'drift'],
  properties: {
    platform: { enum: [...PLATFORMS] },
    state: { enum: [...LISTING_STATES] },
    problem: { type: ['string', 'null'] },
    drift: {
      type: ['array', 'null'],
      description: 'the fields the platform copy differs in, as the last hourly comparison found them',
      items: { type: 'object', required: ['field', 'ours', 'theirs'], properties: { field: { type: 'string' }, ours: {}, theirs: {} } },
    },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

const optionAnswer = {
  type: 'object',
  required: ['id', 'name', 'price'],
  properties: { id: { type: 'integer' }, name: { type: 'string' }, price: { type: 'integer' } },
} as const;

/** The product answer (Resources > Product). */
export const productSchema = {
  type: 'object',
  required: ['id', 'catalogue_id', 'sku', 'retailer_id', 'name', 'price', 'currency', 'availability', 'listings', 'sync_status'],
  properties: {
    id: { type: 'integer' },
    catalogue_id: { type: 'integer' },
    sku: { type: 'string' },
    retailer_id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    price: { type: 'integer' },
    sale_price: { type: ['integer', 'null'] },
    currency: { type: 'string' },
    image_url: { type: ['string', 'null'] },
    availability: { enum: [...AVAILABILITIES] },
    condition: { enum: [...CONDITIONS, null] },
    inventory: { type: ['integer', 'null'] },
    reserved: { type: 'integer' },
    available: { type: ['integer', 'null'] },
    visibility: { enum: [...VISIBILITIES] },
    brand: { type: ['string', 'null'] },
    category: { type: ['string', 'null'] },
    product_type: { type: ['string', 'null'] },
    meta_product_id: { type: ['string', 'null'] },
    listings: { type: 'array', items: listingSchema },
    variants: { type: 'array', items: optionAnswer, description: 'sizes: each price replaces the product price' },
    addons: { type: 'array', items: optionAnswer, description: 'add-ons: each price adds to the line' },
    sync_status: { enum: [...LISTING_STATES] },
    retired_at: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'set when a replace-mode sync retired the product: off every platform and not listed, still readable',
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
