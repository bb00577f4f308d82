import { defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { actingForAccount } from '../../services/account/index.js';
import { getOrder, listOrders, orderListQuery } from '../../services/orders/orders.js';
import { setOrderStatus } from '../../services/orders/holds.js';
import { orderSchema, orderStatusBody } from './orders.js';

// The operator's side of an account's orders: read them, and move one's status (a support desk
// cancelling an order the customer asked to cancel) through the same service as PUT
// /api/v3/catalogues/orders/{order}/status, so held stock moves once and the order's workflow is
// told, as for the account's key. The account's own context, acting as the operator, scopes each
// id to the account the path names (services/account actingForAccount).

const O = '/admin/v1/accounts/{account}/orders';
const base = { tag: 'Orders (operator)', auth: 'operator' } as const;
const orderOutput = { kind: 'resource', status: 200, description: 'The order', schema: orderSchema } as const;

export const orderSettingsOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_orders',
    method: 'GET',
    path: O,
    summary: 'List an account’s orders, most recently changed first',
    description:
      'The answer of list_orders for that account. Filters: status, platform, catalogue_id (--shop), updated_since. ' +
      'Page-number pagination: default 25, at most 100.',
    query: orderListQuery,
    output: { kind: 'list', status: 200, description: 'A page of orders', schema: pageSchema('orders', orderSchema) },
    cli: [{ command: 'orders:list', flags: { shop: 'catalogue_id' } }],
    handler: async ({ oc }, { account, ...query }) => listOrders(await actingForAccount(oc, account), query),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_order',
    method: 'GET',
    path: `${O}/{order}`,
    summary: 'Read one of an account’s orders',
    output: orderOutput,
    cli: [{ command: 'orders:show' }],
    handler: async ({ oc }, { account, order }) => getOrder(await actingForAccount(oc, account), order),
  }),
  defineOperation({
    ...base,
    name: 'admin_set_order_status',
    method: 'PUT',
    path: `${O}/{order}/status`,
    summary: 'Set an account’s order’s status and move its held stock, as set_order_status does',
    description:
      'Any status may follow any status. confirmed, processing, shipped or delivered commits the held stock; cancelled or refunded ' +
      'releases it; each hold moves once. refunded records the change only: no money moves. The change is recorded as the operator’s.',
    body: orderStatusBody,
    output: orderOutput,
    cli: [
      { command: 'orders:status', help: 'Set an order’s status (cancelled, refunded … release its held stock; confirmed … commit it)' },
    ],
    handler: async ({ oc, deps }, { account, order, status }) =>
      setOrderStatus(await actingForAccount(oc, account), { temporal: deps.temporal }, order, status),
  }),
];
