import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { deletedSchema } from '../answers.js';
import {
  productBySkuBody,
  productCreateBody,
  productListQuery,
  productSchema,
  productUpdateBody,
} from '../../services/catalogues/product-schemas.js';
import {
  createProduct,
  deleteProduct,
  deleteProductBySku,
  getProduct,
  getProductBySku,
  listProducts,
  putProductBySku,
  updateProduct,
} from '../../services/catalogues/products.js';
import { CATALOGUE_LIMITS } from '../../domain/catalogues/vocabulary.js';
import { CATALOGUE_MANAGE, CATALOGUE_VIEW, catalogueTools, catalogueWriteTools } from './catalogues.js';

// Products of a shop, by numeric id and by sku. Writes reach the platforms the shop is on before
// they answer: a platform's refusal is 502 and leaves the product as it was. The by-sku path
// parameter is named {product_sku}, not {sku}: the PUT body may carry a sku of its own (which must
// equal the path's), and the doors merge path and body into one input, as the MCP tool does.

const deletedProduct = deletedSchema({ id: { type: 'integer' }, sku: { type: 'string' } });

const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const base = { tag: 'Catalogue', auth: 'rest' } as const;
const P = '/api/v3/catalogues/{catalogue}/products';
const refused = 'a platform the shop is on refused the product (the write is undone)';
const pushWait =
  'The answer waits for the platforms the shop is on (up to 15 s; past that the product answers with its listings pending and the push finishes in the background).';

export const productOperations = [
  defineOperation({
    ...base,
    name: 'list_products',
    method: 'GET',
    path: P,
    permission: CATALOGUE_VIEW,
    summary: 'List the products of a shop, sorted by name, each with its listings',
    description: 'Page-number pagination: default 25, at most 100; limit wins over per_page. Retired products are not listed.',
    query: productListQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of products',
      schema: pageSchema('products', productSchema),
    },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, ...query }) => listProducts(rc, catalogue, query),
  }),
  defineOperation({
    ...base,
    name: 'create_product',
    method: 'POST',
    path: P,
    permission: CATALOGUE_MANAGE,
    summary: 'Create a product (name and price required)',
    description:
      `The shop issues the sku (<sku_prefix>-000001 onwards) when neither sku nor retailer_id is sent. A duplicate sku or retailer_id is 422. ` +
      `availability follows the inventory when omitted. A product missing an image or with a zero price is stored and its listing ` +
      `blocked on the platforms that need them. ${pushWait}`,
    body: productCreateBody,
    output: { kind: 'resource', status: 201, description: 'The product', schema: productSchema },
    refusals: { 502: refused },
    mcp: { ...catalogueWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, ...body }) => createProduct(rc, deps, catalogue, body),
  }),
  defineOperation({
    ...base,
    name: 'get_product_by_sku',
    method: 'GET',
    path: `${P}/by-sku/{product_sku}`,
    permission: CATALOGUE_VIEW,
    summary: 'Read a product by its sku',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The product', schema: productSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, product_sku }) => getProductBySku(rc, catalogue, product_sku),
  }),
  defineOperation({
    ...base,
    name: 'put_product_by_sku',
    method: 'PUT',
    path: `${P}/by-sku/{product_sku}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Create the product with this sku when absent, else change only the fields sent',
    description:
      `Creating needs name and price. A sku or retailer_id in the body must equal the path's. product_type and visibility are accepted ` +
      `when creating (on an existing product only their current values). The sku is at most ${CATALOGUE_LIMITS.skuMax} characters. ${pushWait}`,
    body: productBySkuBody,
    output: { kind: 'resource', status: 200, description: 'The product', schema: productSchema },
    refusals: { 409: 'the sku is frozen (the product is live on a platform)', 502: refused },
    mcp: { ...catalogueWriteTools, annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, product_sku, ...body }) => putProductBySku(rc, deps, catalogue, product_sku, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_product_by_sku',
    method: 'DELETE',
    path: `${P}/by-sku/{product_sku}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Remove the product from every platform, then from the shop',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedProduct },
    refusals: {
      409: 'the platforms have not confirmed the removal within 15 s; repeat the delete',
      502: 'a platform refused the removal (the product is kept)',
    },
    mcp: { ...catalogueTools, elevation: 'mcp:delete', annotations: { ...HINTS.remove, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, product_sku }) => deleteProductBySku(rc, deps, catalogue, product_sku),
  }),
  defineOperation({
    ...base,
    name: 'get_product',
    method: 'GET',
    path: `${P}/{product}`,
    permission: CATALOGUE_VIEW,
    summary: 'Read a product by its numeric id',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The product', schema: productSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, product }) => getProduct(rc, catalogue, product),
  }),
  defineOperation({
    ...base,
    name: 'update_product',
    method: 'PUT',
    path: `${P}/{product}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Change the fields sent (retailer_id, product_type and visibility are not accepted)',
    description: `A new sku is refused once the product is live on any platform (409). ${pushWait}`,
    body: productUpdateBody,
    output: { kind: 'resource', status: 200, description: 'The product', schema: productSchema },
    refusals: { 409: 'the sku is frozen (the product is live on a platform)', 502: refused },
    mcp: { ...catalogueWriteTools, annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, product, ...body }) => updateProduct(rc, deps, catalogue, product, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_product',
    method: 'DELETE',
    path: `${P}/{product}`,
    permission: CATALOGUE_MANAGE,
    summary: 'Remove the product from every platform, then from the shop',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedProduct },
    refusals: {
      409: 'the platforms have not confirmed the removal within 15 s; repeat the delete',
      502: 'a platform refused the removal (the product is kept)',
    },
    mcp: { ...catalogueTools, elevation: 'mcp:delete', annotations: { ...HINTS.remove, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, product }) => deleteProduct(rc, deps, catalogue, product),
  }),
];
