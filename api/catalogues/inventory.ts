import { catalogueTools } from './catalogues.js';
import { HINTS, defineOperation } from '../operation.js';
import { CATALOGUE_LIMITS as L } from '../../domain/catalogues/vocabulary.js';
import { pageSchema } from '../../services/platform/pagination.js';
import {
  cataloguePageQuery,
  derivedRowSchema,
  inventoryQuery,
  listInventory,
  pushInventory,
  skuField,
} from '../../services/catalogues/inventory.js';
import { listMovements, movementSchema } from '../../services/catalogues/stock-ledger.js';

// Stock levels of a shop (Catalogues, products, stock, orders: inventory and movements). Catalogue
// endpoints check the key's issuer: reads need communications.catalogue.view, writes
// communications.catalogue.manage.

const C = '/api/v3/catalogues/{catalogue}';
const base = { tag: 'Catalogue', auth: 'rest', issuerRequired: true } as const;
const VIEW = 'communications.catalogue.view';
const MANAGE = 'communications.catalogue.manage';

const pushBody = {
  type: 'object',
  required: ['levels'],
  properties: {
    levels: {
      type: 'array',
      minItems: 1,
      maxItems: L.inventoryRows,
      description: `Absolute counts, never deltas: up to ${L.inventoryRows} rows, each sku at most once.`,
      items: {
        type: 'object',
        required: ['sku', 'inventory'],
        properties: {
          sku: skuField,
          inventory: { type: 'integer', minimum: 0, maximum: L.inventoryMax, description: 'on hand, a whole number' },
        },
      },
    },
  },
} as const;

const movementsQuery = { type: 'object', properties: { ...cataloguePageQuery } } as const;
const movementPage = pageSchema('movements', movementSchema);

export const inventoryOperations = [
  defineOperation({
    ...base,
    name: 'push_inventory',
    method: 'POST',
    path: `${C}/inventory`,
    permission: MANAGE,
    summary: 'Set stock levels (absolute counts) and push them to every platform',
    description:
      'Each level is an absolute count, never a delta. A level already at its value counts as unchanged and is not republished; ' +
      'a sku the shop has no product for is listed in unknown_skus. Availability follows the count (0 → out of stock, recovery → ' +
      'in stock; available for order at 0 when the shop allows backorders); discontinued and preorder products keep theirs. ' +
      'Changed products are pushed to every platform the shop is on, once, in the background (push_id). A sku sent twice, a ' +
      'negative, fractional or too large count refuses the whole request (422 naming the row) and nothing is applied.',
    body: pushBody,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'What the push changed',
      schema: {
        type: 'object',
        required: ['derived', 'unknown_skus', 'unchanged', 'push_id'],
        properties: {
          derived: { type: 'array', items: derivedRowSchema, description: 'products whose count changed, with the figures after it' },
          unknown_skus: { type: 'array', items: { type: 'string' } },
          unchanged: { type: 'integer', description: 'levels already at their value (not republished)' },
          push_id: { type: ['string', 'null'], description: 'the platform push of the changed products; null when none is owed' },
        },
      },
    },
    mcp: { ...catalogueTools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, { catalogue, levels }) =>
      pushInventory(rc, { temporal: deps.temporal, config: deps.config, log: rc.log }, catalogue, levels),
  }),
  defineOperation({
    ...base,
    name: 'list_inventory',
    method: 'GET',
    path: `${C}/inventory`,
    permission: VIEW,
    summary: 'Stock figures per product: inventory, reserved, available',
    description: 'Live products of the shop by sku. Page-number pagination: default 25, at most 100; limit wins over per_page.',
    query: inventoryQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of inventory rows',
      schema: pageSchema('inventory', derivedRowSchema),
    },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, ...query }) => listInventory(rc, catalogue, query),
  }),
  defineOperation({
    ...base,
    name: 'list_stock_movements',
    method: 'GET',
    path: `${C}/products/by-sku/{sku}/movements`,
    permission: VIEW,
    summary: 'A product’s stock movements, newest first',
    description:
      'The append-only stock ledger of one product: kind (reserve, release, commit, adjust, sync), signed quantity, the figures ' +
      'after it and its cause. Page-number pagination: default 25, at most 100.',
    query: movementsQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of movements',
      schema: {
        ...movementPage,
        required: ['sku', ...movementPage.required],
        properties: { sku: { type: 'string' }, ...movementPage.properties },
      },
    },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, sku, ...query }) => listMovements(rc, catalogue, sku, query),
  }),
];
