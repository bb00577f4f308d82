import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { cartListQuery, cartSchema, getCart } from '../../services/shop/carts.js';
import { listCartsOfChat } from '../../services/shop/links.js';
import { CATALOGUE_VIEW, shopTools } from '../catalogues/index.js';

// Baskets (Resources > Cart): the same shape here, in cart.* webhooks and in the MCP tools.

const base = { tag: 'Shop', auth: 'rest' } as const;

export const cartOperations = [
  defineOperation({
    ...base,
    name: 'list_carts',
    method: 'GET',
    path: '/api/v3/carts',
    permission: CATALOGUE_VIEW,
    summary: 'List baskets, newest first',
    description:
      'Filters: status, conversation_id (the stored form whatsapp:<phone number id>:<E.164>, or a message uid of that chat). Pages of 20, at most 100.',
    query: cartListQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of baskets',
      schema: pageSchema('carts', cartSchema),
    },
    mcp: { ...shopTools, annotations: HINTS.read },
    handler: async ({ rc, deps }, query) => listCartsOfChat(rc, deps.config.publicBaseUrl, query),
  }),
  defineOperation({
    ...base,
    name: 'get_cart',
    method: 'GET',
    path: '/api/v3/carts/{ref}',
    permission: CATALOGUE_VIEW,
    summary: 'Read a basket by its 5-character ref (any case) or its id',
    query: { type: 'object', properties: {}, additionalProperties: true },
    output: { kind: 'resource', status: 200, description: 'The basket', schema: cartSchema },
    mcp: { ...shopTools, annotations: HINTS.read },
    handler: async ({ rc, deps }, { ref }) => getCart(rc, deps.config.publicBaseUrl, ref),
  }),
];
