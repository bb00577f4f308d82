import { HINTS, defineOperation } from '../operation.js';
import { ORDER_PLATFORMS, ORDER_STATUSES } from '../../domain/orders/index.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { getOrder, listOrders, orderListQuery } from '../../services/orders/orders.js';
import { setOrderStatus } from '../../services/orders/holds.js';
import { catalogueTools } from '../catalogues/index.js';

// Orders (Catalogues, products, stock, orders: the orders rows; Resources > Order; States > Order).
// Orders are created by the chat and shop doors (services/orders createOrder); here they are read
// and moved. Catalogue permissions with a live issuer, as the rest of the family; MCP tools on the
// `orders` and `shop` servers (the contract's Catalogue tag) with the commerce capability.

const O = '/api/v3/catalogues/orders';
const base = { tag: 'Catalogue', auth: 'rest', issuerRequired: true } as const;
/** Orders are Catalogue-tagged operations (/api/v3/catalogues/orders): the shop and orders servers, as the contract maps that tag. */
const ordersTools = catalogueTools;
const VIEW = 'communications.catalogue.view';
const MANAGE = 'communications.catalogue.manage';

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

const lineSchema = {
  type: 'object',
  required: ['product_retailer_id', 'product_id', 'name', 'quantity', 'item_price', 'currency', 'stock'],
  properties: {
    product_retailer_id: { type: 'string' },
    product_id: { type: ['integer', 'null'], description: 'null when the code is not in the catalogue (unresolved)' },
    variant_id: { type: ['integer', 'null'] },
    addon_ids: { type: 'array', items: { type: 'integer' } },
    name: { type: ['string', 'null'] },
    quantity: { type: 'integer', minimum: 1 },
    item_price: { type: 'integer', description: 'per unit, hundredths of the currency (frozen at creation)' },
    currency: { type: 'string' },
    note: { type: ['string', 'null'] },
    stock: {
      enum: ['held', 'stock_short', 'unresolved', 'untracked'],
      description:
        'held: the whole quantity was held; stock_short: it could not be held whole (nothing held for the product); ' +
        'unresolved: the code is not in the catalogue; untracked: the product keeps no count (nothing held or refused)',
    },
  },
} as const;

export const orderSchema = {
  type: 'object',
  required: [
    'id',
    'catalogue_id',
    'status',
    'platform',
    'customer_handle',
    'customer_wa_id',
    'provider_message_id',
    'product_items',
    'total_amount',
    'total_currency',
    'needs_attention',
    'cart_id',
    'note',
    'hold_expires_at',
    'created_at',
    'updated_at',
  ],
  properties: {
    id: { type: 'integer' },
    catalogue_id: { type: 'integer' },
    status: { enum: ORDER_STATUSES },
    platform: { enum: ORDER_PLATFORMS },
    customer_handle: { type: ['string', 'null'], description: 'the customer on that platform (chat id, handle, e-mail or typed phone)' },
    customer_wa_id: { type: ['string', 'null'], description: 'older name of customer_handle' },
    provider_message_id: { type: ['string', 'null'], description: 'the provider message the order arrived in' },
    product_items: { type: 'array', items: lineSchema, description: 'frozen at creation, never re-priced' },
    total_amount: { type: 'integer', description: 'hundredths of total_currency' },
    total_currency: { type: 'string' },
    needs_attention: { type: 'boolean', description: 'true when a line is stock_short or unresolved' },
    cart_id: { type: ['integer', 'null'] },
    note: { type: ['string', 'null'] },
    hold_expires_at: {
      ...nullableDateTime,
      description: 'when a pending order’s held stock is released on its own; null when nothing was held',
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;

/** PUT …/orders/{order}/status: what the operator's orders:status sends too. */
export const orderStatusBody = {
  type: 'object',
  required: ['status'],
  properties: { status: { enum: ORDER_STATUSES, description: 'any status may follow any status' } },
} as const;

const orderOutput = { kind: 'resource', status: 200, description: 'The order', schema: orderSchema } as const;

/** Fixed paths under /api/v3/catalogues: api/operations.ts routes them before `{catalogue}`. */
export const orderOperations = [
  defineOperation({
    ...base,
    name: 'list_orders',
    method: 'GET',
    path: O,
    permission: VIEW,
    summary: 'List orders, most recently changed first',
    description:
      'Filters: status, platform, catalogue_id, updated_since. Page-number pagination: default 25, at most 100; limit wins over per_page.',
    query: orderListQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of orders',
      schema: pageSchema('orders', orderSchema),
    },
    mcp: { ...ordersTools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listOrders(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_order',
    method: 'GET',
    path: `${O}/{order}`,
    permission: VIEW,
    summary: 'Read an order',
    description: 'Its frozen lines with what became of each line’s stock, total in hundredths, needs_attention and the hold’s expiry.',
    output: orderOutput,
    mcp: { ...ordersTools, annotations: HINTS.read },
    handler: async ({ rc }, { order }) => getOrder(rc, order),
  }),
  defineOperation({
    ...base,
    name: 'set_order_status',
    method: 'PUT',
    path: `${O}/{order}/status`,
    permission: MANAGE,
    summary: 'Set an order’s status and move its held stock',
    description:
      'Any status may follow any status. confirmed, processing, shipped or delivered commits the held stock (taken off inventory when ' +
      'the shop’s stock_policy is svc; the hold is released when external); cancelled or refunded releases it; each hold moves once, ' +
      'however often or concurrently the status changes. refunded records the change only: no money moves. An unknown status is 422.',
    body: orderStatusBody,
    output: orderOutput,
    mcp: { ...ordersTools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, { order, status }) => setOrderStatus(rc, { temporal: deps.temporal }, order, status),
  }),
];
