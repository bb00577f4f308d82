import { HINTS, defineOperation } from '../operation.js';
import {
  productSendSchema,
  sendCatalogue,
  sendCatalogueBody,
  sendProduct,
  sendProductBody,
  sendProductList,
  sendProductListBody,
} from '../../services/catalogues/product-sends.js';
import { CATALOGUE_MANAGE, catalogueTools } from './catalogues.js';

// Product messages into a chat. Catalogue-family routes, so the issuer needs the catalogue write
// permission; as group message sends do, a send also needs communications.send (checked by the
// service, which knows when something is sent: a product answered on another platform sends
// nothing). Tools on the shop server with the send elevation. Fixed paths under /catalogues: they
// are routed before /catalogues/{catalogue}.

const base = { tag: 'Catalogue', auth: 'rest', permission: CATALOGUE_MANAGE } as const;
const sendTools = { ...catalogueTools, elevation: 'mcp:send', annotations: HINTS.send } as const;
const output = {
  kind: 'outcome' as const,
  status: 201,
  description: 'Sent: data.message_id is the provider’s message id',
  schema: productSendSchema,
};
const refusals = {
  403: 'the key’s issuer lacks communications.send',
  404: 'no such shop (catalogue_id) in this account',
  422: 'chat-channel configuration missing (no chat number, or the shop has no provider catalogue); a product not in the shop or not published on the platform; limits',
  502: 'the chat provider refused the message',
};

export const productSendOperations = [
  defineOperation({
    ...base,
    name: 'send_product',
    method: 'POST',
    path: '/api/v3/catalogues/send-product',
    summary: 'Send one product into a chat, or answer its address on another platform',
    description:
      'The message carries the shop’s provider catalogue id and the product’s retailer id (its sku). catalogue_id names the shop by ' +
      'provider catalogue id or local id; without it the account’s one shop on the platform is used. platform storefront sends ' +
      'nothing: it answers the product’s page (url) and the requests that send it (send_with); 422 when the product is not ' +
      'published there. When the provider has not answered within the send’s wait, message_id is null and status queued: read ' +
      'the message by uid.',
    body: sendProductBody,
    output,
    refusals,
    mcp: sendTools,
    handler: async ({ rc, deps }, body) => sendProduct(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'send_product_list',
    method: 'POST',
    path: '/api/v3/catalogues/send-product-list',
    summary: 'Send a list of products (1 to 10 titled sections, at most 30 products) into a chat',
    description: 'Chat channel only. Every product must be in the shop and published on the chat channel (else 422).',
    body: sendProductListBody,
    output,
    refusals,
    mcp: sendTools,
    handler: async ({ rc, deps }, body) => sendProductList(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'send_catalogue',
    method: 'POST',
    path: '/api/v3/catalogues/send-catalogue',
    summary: 'Send the whole catalogue into a chat',
    description:
      'Chat channel only; body is required. thumbnail_product_retailer_id names the product whose image heads the message ' +
      '(published on the chat channel, else 422).',
    body: sendCatalogueBody,
    output,
    refusals,
    mcp: sendTools,
    handler: async ({ rc, deps }, body) => sendCatalogue(rc, deps, body),
  }),
];
