import { defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { actingForAccount } from '../../services/account/index.js';
import { catalogueListQuery, catalogueSchema, getCatalogue, listCatalogues } from '../../services/catalogues/catalogues.js';
import { productListQuery, productSchema } from '../../services/catalogues/product-schemas.js';
import { getProduct, listProducts } from '../../services/catalogues/products.js';

// The operator's reads of an account's shops (the contract's catalogues) and their products: the
// customer operations' services, queries and answers, acting as the operator for the account the
// path names (services/account actingForAccount), so the operator sees exactly what the account's
// key would, and an id of another account is 404 as it is there.

const S = '/admin/v1/accounts/{account}/catalogues';
const base = { tag: 'Catalogue (operator)', auth: 'operator' } as const;

export const catalogueSettingsOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_catalogues',
    method: 'GET',
    path: S,
    summary: 'List an account’s shops (catalogues), newest first, with their channels',
    description: 'The answer of list_catalogues for that account. Page-number pagination: default 25, at most 100.',
    query: catalogueListQuery,
    output: { kind: 'list', status: 200, description: 'A page of shops', schema: pageSchema('catalogues', catalogueSchema) },
    cli: [{ command: 'shops:list', help: 'An account’s shops (catalogues), newest first' }],
    handler: async ({ oc }, { account, ...query }) => listCatalogues(await actingForAccount(oc, account), query),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_catalogue',
    method: 'GET',
    path: `${S}/{catalogue}`,
    summary: 'Read one of an account’s shops by its numeric id',
    output: { kind: 'resource', status: 200, description: 'The shop', schema: catalogueSchema },
    cli: [{ command: 'shops:show', flags: { shop: 'catalogue' } }],
    handler: async ({ oc }, { account, catalogue }) => getCatalogue(await actingForAccount(oc, account), catalogue),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_products',
    method: 'GET',
    path: `${S}/{catalogue}/products`,
    summary: 'List the products of an account’s shop, sorted by name, each with its listings',
    description:
      'The answer of list_products for that account. Page-number pagination: default 25, at most 100. Retired products are not listed.',
    query: productListQuery,
    output: { kind: 'list', status: 200, description: 'A page of products', schema: pageSchema('products', productSchema) },
    cli: [{ command: 'products:list', flags: { shop: 'catalogue' } }],
    handler: async ({ oc }, { account, catalogue, ...query }) => listProducts(await actingForAccount(oc, account), catalogue, query),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_product',
    method: 'GET',
    path: `${S}/{catalogue}/products/{product}`,
    summary: 'Read a product of an account’s shop by its numeric id',
    output: { kind: 'resource', status: 200, description: 'The product', schema: productSchema },
    cli: [{ command: 'products:show', flags: { shop: 'catalogue' } }],
    handler: async ({ oc }, { account, catalogue, product }) => getProduct(await actingForAccount(oc, account), catalogue, product),
  }),
];
