import { defineOperation, type PageDoor, type PublicCall } from '../operation.js';
import { PAGE_THROTTLED } from '../http/page-door.js';
import { DomainError, notFound } from '../../services/platform/errors.js';
import { PAGE_HEADERS, noticePage, productLandingPage, shopPage } from '../../services/shop/page.js';
import { openStorefrontBasket, storefrontProduct } from '../../services/shop/storefront.js';
import { addFromPage, noteFromPage, pageModel, removeFromPage, submitFromPage } from '../../services/shop/basket.js';

// The shop page at a link's address, public (no key): /shop/<ref>/<page key> is the capability. Its
// reads and forms are operations like any other (schemas, handler, refusals), served by the page
// door (api/http/page-door.ts): forms post ids (product, size, add-ons), never an amount, and a field
// the form does not declare (a price, a total) is not read at all. Each POST answers 303 back to the
// page; a refusal is its domain error's own status, shown on the page named here.

const common = { tag: 'Shop page', auth: 'public' } as const;
/** The client's address, as the door read it (the per-address limits of the shop). */
const addressOf = (call: PublicCall) => call.client?.address ?? '';
const slowDown = (err: DomainError) => noticePage('Slow down', err.message);
const shopClosed = () => noticePage('Shop closed', 'This shop is closed and is not taking orders at the moment.');

/** A basket page's refusals: an unknown basket or a closed shop is the page; anything else is shown on the basket. */
const basketPage: PageDoor = {
  headers: PAGE_HEADERS,
  refusal: async ({ deps }, { ref, key }, err) => {
    if (err.kind === 'not_found') return noticePage('Basket not found', 'This link does not open a basket.');
    if (err.kind === 'forbidden') return shopClosed();
    if (err.detail.reason === PAGE_THROTTLED) return slowDown(err);
    const message = Object.values(err.detail.errors ?? {})[0]?.[0] ?? err.message;
    // Drawing the basket may itself be refused (no basket at this address, a closed shop): the door shows that instead.
    return shopPage({ ...(await pageModel(deps, ref, key, {})), error: message });
  },
};

/** A product page's refusals: there is no basket yet to show them on. */
const productPage: PageDoor = {
  headers: PAGE_HEADERS,
  refusal: async (_call, _input, err) => {
    if (err.kind === 'not_found') return noticePage('Product not found', 'This shop does not offer this product.');
    if (err.kind === 'forbidden') return shopClosed();
    if (err.kind === 'rate_limited') return slowDown(err);
    return noticePage('Not possible', err.message);
  },
};

const pageAnswer = (description: string) => ({ kind: 'page', status: 200, description, schema: { type: 'string' } }) as const;
const backToPage = (description: string) => ({ kind: 'page', status: 303, description, schema: { type: 'string' } }) as const;
const back = (ref: string, key: string, anchor = '') => ({
  redirect: `/shop/${encodeURIComponent(ref)}/${encodeURIComponent(key)}${anchor}`,
});

const formRefusals = {
  403: 'the shop is closed: its account is suspended',
  404: 'no basket at this address',
  409: 'the basket is ordered or expired',
  422: "a bad line, or over the shop's quantity caps",
  429: "too many requests, or the address's orders in this shop for the hour (Retry-After)",
};
const FORM = 'Form post (application/x-www-form-urlencoded) from the shop page; answers 303 to the page, or the page with the refusal.';
/** An id the page posts: a whole number (bigint ids stay below 2^53). */
const id = (what: string) => ({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, 'x-error': `Unknown ${what}.` }) as const;

const P = '/shop/{ref}/{key}';
const PRODUCT = '/shop/{catalogue}/p/{sku}';

export const shopPageOperations = [
  defineOperation({
    ...common,
    name: 'shop_product_page',
    method: 'GET',
    path: PRODUCT,
    summary: "A product's page in the shop (the address the chat catalogue links to)",
    query: { type: 'object', properties: {} },
    output: pageAnswer('HTML page'),
    refusals: {
      403: 'the shop is closed: its account is suspended (an HTML page)',
      404: 'no such product in this shop (an HTML page)',
      429: 'too many requests (an HTML page)',
    },
    page: productPage,
    handler: async ({ deps }, { catalogue, sku }) => {
      const p = await storefrontProduct(deps.orm.em.fork(), catalogue, sku);
      return {
        html: productLandingPage({
          shopName: p.shop_name,
          name: p.name,
          description: p.description,
          imageUrl: p.image_url,
          price: Number(p.price),
          salePrice: p.sale_price === null ? null : Number(p.sale_price),
          currency: p.currency,
          action: `/shop/${encodeURIComponent(catalogue)}/p/${encodeURIComponent(sku)}`,
        }),
      };
    },
  }),
  defineOperation({
    ...common,
    name: 'shop_open_basket',
    method: 'POST',
    path: PRODUCT,
    summary: 'Open a basket on the product and go to its page',
    body: { type: 'object', properties: {} },
    output: backToPage("To the new basket's page, on the product"),
    refusals: {
      403: 'the shop is closed: its account is suspended',
      404: 'no such product in this shop',
      429: "too many requests, or the address's baskets in this shop for the hour (Retry-After)",
    },
    page: productPage,
    handler: async (call, { catalogue, sku }) => ({ redirect: await openStorefrontBasket(call.deps, catalogue, sku, addressOf(call)) }),
  }),
  defineOperation({
    ...common,
    name: 'shop_basket_page',
    method: 'GET',
    path: P,
    summary: "The shop page of a basket (a shop link's address)",
    description:
      'Menu by category (?category=<slug or id>), a product with its sizes and add-ons (?product=<id>), the basket, its note and the submit.',
    query: {
      type: 'object',
      properties: {
        category: { type: 'string', maxLength: 255 },
        product: { type: 'string', maxLength: 20 },
        menu: { type: 'string', maxLength: 8 },
      },
    },
    output: pageAnswer('HTML page'),
    refusals: {
      403: 'the shop is closed: its account is suspended (an HTML page)',
      404: 'no basket at this address (an HTML page)',
      429: 'too many requests (an HTML page)',
    },
    page: basketPage,
    handler: async ({ deps }, { ref, key, category, product, menu }) => ({
      html: shopPage(await pageModel(deps, ref, key, { category, product, menu: menu !== undefined })),
    }),
  }),
  defineOperation({
    ...common,
    name: 'shop_add_line',
    method: 'POST',
    path: `${P}/items`,
    summary: 'Add a line: product_id, variant_id, addon_id (repeated), quantity, note',
    description: FORM,
    body: {
      type: 'object',
      required: ['product_id'],
      properties: {
        product_id: { ...id('product'), 'x-error': 'Choose a product.' },
        variant_id: id('size'),
        addon_id: { type: 'array', items: id('add-on') },
        quantity: {
          type: 'integer',
          minimum: 1,
          maximum: Number.MAX_SAFE_INTEGER,
          default: 1,
          'x-error': 'The quantity must be at least 1.',
        },
        note: { type: 'string' },
      },
    } as const,
    output: backToPage('Back to the basket'),
    refusals: formRefusals,
    page: basketPage,
    handler: async ({ deps }, { ref, key, product_id, variant_id, addon_id, quantity, note }) => {
      await addFromPage(deps, ref, key, {
        productId: product_id,
        variantId: variant_id ?? null,
        addonIds: addon_id ?? [],
        quantity: quantity ?? 1,
        note: note ?? null,
      });
      return back(ref, key, '?menu=1#basket');
    },
  }),
  defineOperation({
    ...common,
    name: 'shop_remove_line',
    method: 'POST',
    path: `${P}/items/{item}/remove`,
    summary: 'Remove a line',
    description: FORM,
    body: { type: 'object', properties: {} },
    output: backToPage('Back to the basket'),
    refusals: formRefusals,
    page: basketPage,
    handler: async ({ deps }, { ref, key, item }) => {
      if (!/^\d{1,15}$/.test(item)) throw notFound('Basket line');
      await removeFromPage(deps, ref, key, Number(item));
      return back(ref, key, '?menu=1#basket');
    },
  }),
  defineOperation({
    ...common,
    name: 'shop_set_note',
    method: 'POST',
    path: `${P}/note`,
    summary: "Set the basket's note",
    description: FORM,
    body: { type: 'object', properties: { note: { type: 'string' } } },
    output: backToPage('Back to the basket'),
    refusals: formRefusals,
    page: basketPage,
    handler: async ({ deps }, { ref, key, note }) => {
      await noteFromPage(deps, ref, key, note ?? '');
      return back(ref, key, '?menu=1#basket');
    },
  }),
  defineOperation({
    ...common,
    name: 'shop_submit_basket',
    method: 'POST',
    path: `${P}/submit`,
    summary: 'Send the basket as an order (the note sent with it is saved first)',
    description: FORM,
    body: { type: 'object', properties: { note: { type: 'string' } } },
    output: backToPage('Back to the basket, ordered'),
    refusals: formRefusals,
    page: basketPage,
    handler: async (call, { ref, key, note }) => {
      if (note !== undefined) await noteFromPage(call.deps, ref, key, note);
      await submitFromPage(call.deps, ref, key, addressOf(call));
      return back(ref, key);
    },
  }),
];
