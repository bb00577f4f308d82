import { defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { actingForAccount } from '../../services/account/index.js';
import { cartListQuery, cartSchema, getCart } from '../../services/shop/carts.js';
import { listCartsOfChat } from '../../services/shop/links.js';

// The operator's reads of an account's baskets (Resources > Cart): list_carts' and get_cart's
// services and answers, acting as the operator for the account the path names, so a basket of
// another account is 404 here as for the account's key.

const B = '/admin/v1/accounts/{account}/carts';
const base = { tag: 'Shop (operator)', auth: 'operator' } as const;

export const cartSettingsOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_carts',
    method: 'GET',
    path: B,
    summary: 'List an account’s baskets, newest first',
    description:
      'The answer of list_carts for that account. Filters: status, conversation_id (the stored form whatsapp:<phone number id>:<E.164>, ' +
      'or a message uid of that chat). Pages of 20, at most 100.',
    query: cartListQuery,
    output: { kind: 'list', status: 200, description: 'A page of baskets', schema: pageSchema('carts', cartSchema) },
    cli: [{ command: 'baskets:list' }],
    handler: async ({ oc, deps }, { account, ...query }) =>
      listCartsOfChat(await actingForAccount(oc, account), deps.config.publicBaseUrl, query),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_cart',
    method: 'GET',
    path: `${B}/{ref}`,
    summary: 'Read one of an account’s baskets by its 5-character ref (any case) or its id',
    output: { kind: 'resource', status: 200, description: 'The basket', schema: cartSchema },
    cli: [{ command: 'baskets:show', flags: { basket: 'ref' } }],
    handler: async ({ oc, deps }, { account, ref }) => getCart(await actingForAccount(oc, account), deps.config.publicBaseUrl, ref),
  }),
];
