import { randomUUID } from 'node:crypto';
import type { FromSchema } from 'json-schema-to-ts';
import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import type { RequestContext } from '../platform/context.js';
import { DomainError, validationFailed } from '../platform/errors.js';
import { pageAnswer } from '../platform/pagination.js';
import { startWorkflow, type StarterDeps } from '../../temporal/starters.js';
import { catalogueSetupStarter } from '../../workflows/catalogues/catalogue-setup.starter.js';
import { defaultSkuPrefix } from '../../domain/catalogues/products.js';
import { listPage } from '../../domain/catalogues/product-input.js';
import { STOREFRONT_DEFAULTS, STOREFRONT_RANGES } from '../../domain/catalogues/index.js';
import { CATALOGUE_LIMITS, PLATFORMS, SOURCES_OF_TRUTH, STOCK_POLICIES } from '../../domain/catalogues/vocabulary.js';
import { requireShop } from './shops.js';
import { requestPush, startPushAfterCommit } from './push-requests.js';
import {
  bumpRevisions,
  catalogueById,
  cataloguesPage,
  countCatalogues,
  deleteCatalogue,
  insertCatalogue,
  listOnAddedChannels,
  rederiveZeroAvailability,
  setMetaCatalogueId,
  updateSettings,
  type CatalogueRow,
  type SettingColumn,
} from './store/shops.js';
import { iso } from '../platform/time.js';

// Shops (the contract's catalogues): list, create (which creates the shop's catalogue at the chat
// provider), read and settings changes.

/** Temporal client and task queues: what the catalogue services need to start their workflows. */
export type CatalogueDeps = StarterDeps;

/**
 * How long a shop create waits for the chat provider's catalogue id. Past it the shop answers with
 * meta_catalogue_id null and the setup workflow stores the id when the provider answers.
 */
export const SETUP_WAIT_MS = 15_000;

const settingProperties = {
  name: { type: 'string', minLength: 1, maxLength: CATALOGUE_LIMITS.nameMax },
  description: { type: ['string', 'null'], maxLength: CATALOGUE_LIMITS.descriptionMax },
  vertical: { type: ['string', 'null'], maxLength: 64, description: 'provider commerce vertical, e.g. commerce' },
  default_currency: {
    type: ['string', 'null'],
    pattern: '^[A-Za-z]{3}$',
    description: 'ISO 4217; new products default to it (else the account currency)',
  },
  stock_policy: {
    enum: [...STOCK_POLICIES],
    description: 'external (default): the caller’s system owns the stock count; svc: the service keeps it',
  },
  source_of_truth: { enum: [...SOURCES_OF_TRUTH], description: 'default api' },
  reservation_ttl_hours: { type: 'integer', minimum: 1, maximum: 8760, description: 'default 48' },
  low_stock_threshold: {
    type: ['integer', 'null'],
    minimum: 0,
    maximum: CATALOGUE_LIMITS.inventoryMax,
    description: 'when set, a once-a-day notice per product when available reaches it',
  },
  allow_backorders: {
    type: 'boolean',
    description: 'default false; when true a derived availability at 0 available is "available for order" instead of "out of stock"',
  },
  channels: {
    type: 'array',
    items: { enum: [...PLATFORMS] },
    uniqueItems: true,
    description: 'where the shop is published; default ["whatsapp"]; [] keeps the shop on no platform',
  },
  max_line_quantity: {
    type: 'integer',
    ...STOREFRONT_RANGES.maxLineQuantity,
    description: `the most units of one basket line (shop page and shop links); default ${STOREFRONT_DEFAULTS.maxLineQuantity}`,
  },
  max_basket_quantity: {
    type: 'integer',
    ...STOREFRONT_RANGES.maxBasketQuantity,
    description: `the most units in one basket, all lines together; default ${STOREFRONT_DEFAULTS.maxBasketQuantity}`,
  },
  checkout_hold_minutes: {
    type: 'integer',
    ...STOREFRONT_RANGES.checkoutHoldMinutes,
    description:
      `how long an order from a basket with no known customer (not sent into a chat) holds its stock unless the shop moves it on; ` +
      `never longer than reservation_ttl_hours; default ${STOREFRONT_DEFAULTS.checkoutHoldMinutes}`,
  },
  address_baskets_per_hour: {
    type: 'integer',
    ...STOREFRONT_RANGES.perAddressHour,
    description: `baskets one client address may open on the shop's product pages in any hour (then 429); default ${STOREFRONT_DEFAULTS.addressBasketsPerHour}`,
  },
  address_orders_per_hour: {
    type: 'integer',
    ...STOREFRONT_RANGES.perAddressHour,
    description: `orders one client address may submit from the shop's pages in any hour (then 429); default ${STOREFRONT_DEFAULTS.addressOrdersPerHour}`,
  },
} as const;

/** The storefront limits, settable on create and update alike (column names as the settings). */
const STOREFRONT_SETTINGS = [
  'max_line_quantity',
  'max_basket_quantity',
  'checkout_hold_minutes',
  'address_baskets_per_hour',
  'address_orders_per_hour',
] as const;

export const catalogueCreateBody = {
  type: 'object',
  required: ['name'],
  properties: {
    ...settingProperties,
    sku_prefix: {
      type: 'string',
      pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,15}$',
      description: 'accepted on create only: issued skus read <sku_prefix>-000001; default from the name (letters and digits, else SKU)',
    },
  },
  additionalProperties: false,
} as const;

export const catalogueUpdateBody = {
  type: 'object',
  properties: {
    ...settingProperties,
    sku_prefix: { not: {}, 'x-error': 'The sku prefix is accepted on create only.' },
  },
  additionalProperties: false,
} as const;

export type CatalogueCreateInput = FromSchema<typeof catalogueCreateBody>;
export type CatalogueUpdateInput = Omit<FromSchema<typeof catalogueUpdateBody>, 'sku_prefix'>;

export const catalogueListQuery = {
  type: 'object',
  properties: {
    page: { type: 'integer', description: 'from 1; a nonpositive page reads as 1' },
    per_page: { type: 'integer', description: 'default 25, at most 100; a nonpositive value reads as the default' },
    limit: { type: 'integer', description: 'wins over per_page; default 25, at most 100; a nonpositive value reads as the default' },
  },
} as const;

/** The Catalogue resource (a shop). */
export const catalogueSchema = {
  type: 'object',
  required: ['id', 'name', 'channels', 'sku_prefix', 'stock_policy', 'source_of_truth', 'reservation_ttl_hours'],
  properties: {
    id: { type: 'integer' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    vertical: { type: ['string', 'null'] },
    default_currency: { type: ['string', 'null'] },
    meta_catalogue_id: { type: ['string', 'null'], description: 'the chat provider’s catalogue id; null until the provider has answered' },
    channels: { type: 'array', items: { enum: [...PLATFORMS] } },
    sku_prefix: { type: 'string' },
    stock_policy: { enum: [...STOCK_POLICIES] },
    source_of_truth: { enum: [...SOURCES_OF_TRUTH] },
    reservation_ttl_hours: { type: 'integer' },
    low_stock_threshold: { type: ['integer', 'null'] },
    allow_backorders: { type: 'boolean' },
    max_line_quantity: { type: 'integer' },
    max_basket_quantity: { type: 'integer' },
    checkout_hold_minutes: { type: 'integer' },
    address_baskets_per_hour: { type: 'integer' },
    address_orders_per_hour: { type: 'integer' },
    products_count: { type: 'integer', description: 'products of the shop (retired ones not counted)' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const catalogueView = (r: CatalogueRow) => ({
  id: r.id,
  name: r.name,
  description: r.description,
  vertical: r.vertical,
  default_currency: r.default_currency,
  meta_catalogue_id: r.meta_catalogue_id,
  channels: r.channels,
  sku_prefix: r.sku_prefix,
  stock_policy: r.stock_policy,
  source_of_truth: r.source_of_truth,
  reservation_ttl_hours: r.reservation_ttl_hours,
  low_stock_threshold: r.low_stock_threshold,
  allow_backorders: r.allow_backorders,
  max_line_quantity: r.max_line_quantity,
  max_basket_quantity: r.max_basket_quantity,
  checkout_hold_minutes: r.checkout_hold_minutes,
  address_baskets_per_hour: r.address_baskets_per_hour,
  address_orders_per_hour: r.address_orders_per_hour,
  products_count: Number(r.products_count ?? 0),
  created_at: iso(r.created_at)!,
  updated_at: iso(r.updated_at)!,
});

/** Newest first. */
export async function listCatalogues(rc: RequestContext, q: { page?: number; per_page?: number; limit?: number }) {
  const { page, perPage, offset } = listPage(q);
  const total = await countCatalogues(rc.em, rc.account.id);
  const rows = await cataloguesPage(rc.em, rc.account.id, perPage, offset);
  return pageAnswer('catalogues', rows.map(catalogueView), { page, perPage }, total);
}

export async function getCatalogue(rc: RequestContext, ref: string | number) {
  const shop = await requireShop(rc, ref);
  const row = await catalogueById(rc.em, shop.id);
  return catalogueView(row!);
}

function shopName(name: string): string {
  const n = name.trim();
  if (n === '') throw validationFailed({ name: ['The name field is required.'] });
  return n;
}

const upper = (s: string | null | undefined) => (s === undefined || s === null ? s : s.toUpperCase());
const blankToNull = (s: string | null | undefined) => (s === undefined || s === null ? s : s.trim() === '' ? null : s.trim());

/**
 * Creates the shop, then its catalogue at the chat provider (the catalogue setup workflow), waiting
 * a bounded time for the provider's id. A provider refusal removes the shop again and answers 502:
 * a shop exists only with its provider catalogue, or on its way to one.
 */
export async function createCatalogue(rc: RequestContext, deps: CatalogueDeps, input: CatalogueCreateInput) {
  const name = shopName(input.name);
  const id = await insertCatalogue(rc.em, {
    account_id: rc.account.id,
    name,
    description: blankToNull(input.description) ?? null,
    vertical: blankToNull(input.vertical) ?? null,
    default_currency: upper(input.default_currency) ?? null,
    channels: input.channels ?? ['whatsapp'],
    sku_prefix: input.sku_prefix ?? defaultSkuPrefix(name),
    stock_policy: input.stock_policy ?? 'external',
    source_of_truth: input.source_of_truth ?? 'api',
    reservation_ttl_hours: input.reservation_ttl_hours ?? 48,
    low_stock_threshold: input.low_stock_threshold ?? null,
    allow_backorders: input.allow_backorders ?? false,
    max_line_quantity: input.max_line_quantity ?? STOREFRONT_DEFAULTS.maxLineQuantity,
    max_basket_quantity: input.max_basket_quantity ?? STOREFRONT_DEFAULTS.maxBasketQuantity,
    checkout_hold_minutes: input.checkout_hold_minutes ?? STOREFRONT_DEFAULTS.checkoutHoldMinutes,
    address_baskets_per_hour: input.address_baskets_per_hour ?? STOREFRONT_DEFAULTS.addressBasketsPerHour,
    address_orders_per_hour: input.address_orders_per_hour ?? STOREFRONT_DEFAULTS.addressOrdersPerHour,
  });
  let metaCatalogueId: string | null = null;
  try {
    metaCatalogueId = await setUpAtProvider(deps, rc.account.id, id);
  } catch (err) {
    await deleteCatalogue(rc.em, id, rc.account.id);
    const refused = providerRefusal(err);
    if (refused !== undefined) {
      throw new DomainError('provider_failure', `The chat provider refused to create the catalogue${refused ? `: ${refused}` : '.'}`, {
        reason: 'provider_refused',
      });
    }
    if (err instanceof WorkflowFailedError)
      throw new DomainError('provider_failure', 'The catalogue could not be created at the chat provider.', { reason: 'provider_failed' });
    throw err;
  }
  if (metaCatalogueId) await setMetaCatalogueId(rc.em, id, metaCatalogueId);
  else rc.log.info({ catalogue: id }, 'catalogue setup still running; meta_catalogue_id follows');
  return getCatalogue(rc, id);
}

/** The provider's catalogue id, or null when the setup is still running after the bounded wait. */
async function setUpAtProvider(deps: CatalogueDeps, accountId: number, catalogueId: number): Promise<string | null> {
  const handle = await startWorkflow(deps, catalogueSetupStarter, { accountId, catalogueId }, [{ accountId, catalogueId }]);
  const result = await within(handle.result(), SETUP_WAIT_MS);
  return result === TIMED_OUT ? null : result.metaCatalogueId;
}

export const TIMED_OUT = Symbol('timed out');

/** The promise's value, or TIMED_OUT after `ms` (the promise keeps running; a late failure is ignored). */
export async function within<T>(p: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  p.catch(() => undefined);
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The provider's words when a workflow failed because the provider refused (an ApplicationFailure of
 * type ProviderRefused anywhere in the cause chain); undefined for any other error.
 */
export function providerRefusal(err: unknown): string | undefined {
  for (let e = err as Error | undefined, i = 0; e && i < 8; e = e.cause as Error | undefined, i++) {
    if (e instanceof ApplicationFailure && e.type === 'ProviderRefused') return e.message ?? '';
  }
  return undefined;
}

/**
 * Changes any setting but sku_prefix. A channel added gives every live product of the shop a pending
 * listing there; a change of allow_backorders re-derives the availability of products whose
 * availability follows the count. Either way the products touched move to a new revision and one
 * push (recorded with the change, started after the commit) takes them to the shop's platforms.
 */
export async function updateCatalogue(rc: RequestContext, deps: CatalogueDeps, ref: string | number, input: CatalogueUpdateInput) {
  const push = await rc.em.transactional(async (tx) => {
    const trc = { ...rc, em: tx };
    const shop = await requireShop(trc, ref, { forUpdate: true });
    const sets: Array<[SettingColumn, unknown]> = [];
    const set = (column: SettingColumn, value: unknown) => sets.push([column, value]);
    if (input.name !== undefined) set('name', shopName(input.name));
    if (input.description !== undefined) set('description', blankToNull(input.description));
    if (input.vertical !== undefined) set('vertical', blankToNull(input.vertical));
    if (input.default_currency !== undefined) set('default_currency', upper(input.default_currency));
    if (input.stock_policy !== undefined) set('stock_policy', input.stock_policy);
    if (input.source_of_truth !== undefined) set('source_of_truth', input.source_of_truth);
    if (input.reservation_ttl_hours !== undefined) set('reservation_ttl_hours', input.reservation_ttl_hours);
    if (input.low_stock_threshold !== undefined) set('low_stock_threshold', input.low_stock_threshold);
    if (input.allow_backorders !== undefined) set('allow_backorders', input.allow_backorders);
    if (input.channels !== undefined) set('channels', input.channels);
    for (const column of STOREFRONT_SETTINGS) if (input[column] !== undefined) set(column, input[column]);
    if (!sets.length) return null;
    await updateSettings(tx, shop.id, sets);

    const touched = new Set<number>();
    const added = (input.channels ?? []).filter((c) => !shop.channels.includes(c));
    if (added.length) {
      for (const id of await listOnAddedChannels(tx, shop.id, added)) touched.add(id);
    }
    if (input.allow_backorders !== undefined && input.allow_backorders !== shop.allow_backorders) {
      const availability = input.allow_backorders ? 'available for order' : 'out of stock';
      for (const id of await rederiveZeroAvailability(tx, shop.id, availability)) touched.add(id);
    }
    const channels = input.channels ?? shop.channels;
    if (!touched.size || !channels.length) return null;
    const productIds = [...touched].sort((a, b) => a - b);
    await bumpRevisions(tx, productIds);
    return requestPush(tx, {
      accountId: rc.account.id,
      catalogueId: shop.id,
      pushId: `settings-${randomUUID()}`,
      productIds,
      cause: { kind: 'catalogue_settings', added_channels: added, allow_backorders: input.allow_backorders ?? null },
    });
  });
  if (push) await startPushAfterCommit(rc.em, deps, rc.log, push);
  return getCatalogue(rc, ref);
}
