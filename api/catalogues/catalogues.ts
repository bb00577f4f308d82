import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import {
  catalogueCreateBody,
  catalogueListQuery,
  catalogueSchema,
  catalogueUpdateBody,
  createCatalogue,
  getCatalogue,
  listCatalogues,
  updateCatalogue,
} from '../../services/catalogues/catalogues.js';

// Shops (the contract's catalogues). A family added after 7 September 2026: every route names its
// issuer permission, so keys without an issuer are refused. Catalogue tools sit on the `shop` and
// `orders` MCP servers (the contract maps the Catalogue tag to both) under the contract's
// capability scope for commerce (the contract lists mcp:commerce, no mcp:shop), writes with the
// write elevation.

/** The MCP exposure every Catalogue-tagged tool shares (orders' too): the shop and orders servers, commerce capability. */
export const catalogueTools = { servers: ['shop', 'orders'], scope: 'mcp:commerce' } as const;
export const catalogueWriteTools = { ...catalogueTools, elevation: 'mcp:write' } as const;
/** Shop links and baskets (the Shop tag, which the contract's map does not name): the shop server only. */
export const shopTools = { servers: ['shop'], scope: 'mcp:commerce' } as const;
export const CATALOGUE_VIEW = 'communications.catalogue.view';
export const CATALOGUE_MANAGE = 'communications.catalogue.manage';

const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const base = { tag: 'Catalogue', auth: 'rest' } as const;
const C = '/api/v3/catalogues';

export const catalogueOperations = [
  defineOperation({
    ...base,
    name: 'list_catalogues',
    method: 'GET',
    path: C,
    permission: CATALOGUE_VIEW,
    summary: 'List the shops (catalogues), newest first, with their channels',
    description: 'Page-number pagination: default 25, at most 100; limit wins over per_page; a nonpositive value reads as the default.',
    query: catalogueListQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of shops',
      schema: pageSchema('catalogues', catalogueSchema),
    },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listCatalogues(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'create_catalogue',
    method: 'POST',
    path: C,
    permission: CATALOGUE_MANAGE,
    summary: 'Create a shop and its catalogue at the chat provider',
    description:
      'Only name is required. Defaults: channels ["whatsapp"], stock_policy external, source_of_truth api, reservation_ttl_hours 48, ' +
      'allow_backorders false, sku_prefix from the name. The provider catalogue id is meta_catalogue_id; it is null when the provider ' +
      'has not answered within 15 s (it is stored when it does). A provider refusal answers 502 and no shop is kept.',
    body: catalogueCreateBody,
    output: { kind: 'resource', status: 201, description: 'The shop', schema: catalogueSchema },
    refusals: { 502: 'the chat provider refused to create the catalogue (no shop is kept)' },
    mcp: { ...catalogueWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => createCatalogue(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'get_catalogue',
    method: 'GET',
    path: `${C}/{catalogue}`,
    permission: CATALOGUE_VIEW,
    summary: 'Read a shop by its numeric id',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The shop', schema: catalogueSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue }) => getCatalogue(rc, catalogue),
  }),
  defineOperation({
    ...base,
    name: 'update_catalogue',
    method: 'PATCH',
    path: `${C}/{catalogue}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Change any setting of a shop except sku_prefix',
    description:
      'Only the settings sent change. A channel added gives every product of the shop a pending listing there, and one push ' +
      'publishes them; changing allow_backorders re-derives (and republishes) the availability of products whose availability ' +
      'follows their stock.',
    body: catalogueUpdateBody,
    output: { kind: 'resource', status: 200, description: 'The shop', schema: catalogueSchema },
    mcp: { ...catalogueWriteTools, annotations: HINTS.update },
    handler: async ({ rc, deps }, { catalogue, ...settings }) => updateCatalogue(rc, deps, catalogue, settings),
  }),
];
