import { HINTS, defineOperation } from '../operation.js';
import { createShopLink, shopLinkBody, shopLinkSchema } from '../../services/shop/links.js';
import { CATALOGUE_VIEW, shopTools } from '../catalogues/index.js';

// Shop links (Endpoints > Shop links and baskets): a basket and its page address; sent into a chat
// as a button when a recipient is named (that also needs communications.send, checked by the
// service since it depends on the body).

export const shopLinkOperations = [
  defineOperation({
    tag: 'Shop',
    auth: 'rest',
    name: 'create_shop_link',
    method: 'POST',
    path: '/api/v3/shop-links',
    permission: CATALOGUE_VIEW,
    summary: 'Open a basket on the menu, a category or a product, with lines in it; share the link or send it into a chat',
    description:
      'With neither category nor sku the link opens the menu; sku wins over category (its id or slug). items: sku, variant (size id or ' +
      'name), addons (ids or names), quantity (1-999), note; at most 100. A sku the shop does not offer is reported in problems[] and ' +
      "the other lines still go in; a size or add-on that is not the product's is 422. Prices are the service's: a size replaces the " +
      'product price, each add-on adds to it. Without conversation_id or to, sent is false and the link is for sharing. With one of ' +
      'them the link is sent into that chat as a button: that needs communications.send (403), and outside the 24-hour window it is ' +
      '409 (nothing is kept). catalogue_id may be omitted when the account has one shop. The link is <base>/shop/<ref>/<page key>.',
    body: shopLinkBody,
    output: {
      kind: 'outcome',
      contract: 'Endpoints > Shop links and baskets: link; sent boolean; problems[] for unmatched lines',
      status: 201,
      description: 'The link, whether it was sent, the unmatched lines and the basket',
      schema: shopLinkSchema,
    },
    refusals: {
      403: 'a recipient was named and the key issuer lacks communications.send',
      409: 'the chat is outside the 24-hour window (the customer has not written in 24 hours)',
    },
    mcp: { ...shopTools, elevation: 'mcp:write', annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => createShopLink(rc, { ...deps, log: rc.log }, body),
  }),
];
