import type Koa from 'koa';
import type { AppDeps } from '../http/app.js';
import type { RouteDef, RouteRequest, RouteResult } from '../http/registry.js';
import { FailureThrottle } from '../http/ratelimit.js';
import { toHttpError } from '../http/errors.js';
import { DomainError } from '../../services/platform/errors.js';
import { PAGE_HEADERS, noticePage, productLandingPage, shopPage } from '../../services/shop/page.js';
import { openStorefrontBasket, storefrontProduct } from '../../services/shop/storefront.js';
import { addFromPage, noteFromPage, pageModel, removeFromPage, submitFromPage } from '../../services/shop/basket.js';

// The shop page at a link's address, public (no key): /shop/<ref>/<page key> is the capability.
// Forms post application/x-www-form-urlencoded ids (product, size, add-ons), never an amount; any
// other field (a price, a total) is not read at all. Every answer is HTML; each POST answers 303
// back to the page (post/redirect/get), a refusal re-renders the page with the reason.

/** Page requests per client address per minute, per API process (the link is public: bots find links). */
export const SHOP_PAGE_PER_MINUTE = 300;
const BODY_LIMIT = 16 * 1024;

const html = (ctx: Koa.Context, status: number, body: string): RouteResult => {
  ctx.type = 'html';
  return { status, body, headers: PAGE_HEADERS };
};

/** The refusals a page answers as a page; their status (and Retry-After) come from the one mapping every door uses (toHttpError). */
const PAGE_REFUSALS = new Set<DomainError['kind']>(['not_found', 'invalid', 'conflict', 'bad_request', 'forbidden', 'rate_limited']);

function formOf(req: RouteRequest): URLSearchParams {
  const raw = (req.ctx.state.rawBody as Buffer | undefined)?.toString('utf8') ?? '';
  return new URLSearchParams(raw);
}

const intOf = (v: string | null) => (v !== null && /^\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : null);

export function shopPageRoutes(deps: AppDeps): RouteDef[] {
  const throttle = new FailureThrottle(SHOP_PAGE_PER_MINUTE);
  const pageDeps = { ...deps };

  /** Runs a page request: throttled per address, domain refusals rendered as a page with their status. */
  const page =
    (fn: (req: RouteRequest) => Promise<RouteResult>) =>
    async (req: RouteRequest): Promise<RouteResult> => {
      const { ctx } = req;
      // The throttle counts every page request of the address (its "failures" are simply requests here).
      if (throttle.blocked(ctx.ip)) {
        ctx.set('Retry-After', '60');
        return html(ctx, 429, noticePage('Slow down', 'Too many requests from your network. Try again in a minute.'));
      }
      throttle.fail(ctx.ip);
      try {
        return await fn(req);
      } catch (err) {
        return refusalPage(req, err);
      }
    };
  /** A refusal as a page with its status; the basket page it is shown on may itself be refused (an unknown basket). */
  const refusalPage = async (req: RouteRequest, err: unknown): Promise<RouteResult> => {
    const { ctx } = req;
    if (!(err instanceof DomainError) || !PAGE_REFUSALS.has(err.kind)) throw err;
    const { status, extra } = toHttpError(err);
    for (const [name, value] of Object.entries(extra.headers ?? {})) ctx.set(name, value);
    if (err.kind === 'not_found') return html(ctx, status, noticePage('Basket not found', 'This link does not open a basket.'));
    // A suspended account's shop: every page of it says so, and shows nothing of the basket.
    if (err.kind === 'forbidden')
      return html(ctx, status, noticePage('Shop closed', 'This shop is closed and is not taking orders at the moment.'));
    // A product page's basket was not opened: there is no basket page to show the refusal on.
    if (err.kind === 'rate_limited' && req.params.ref === undefined) return html(ctx, status, noticePage('Slow down', err.message));
    const message = Object.values(err.detail.errors ?? {})[0]?.[0] ?? err.message;
    let model;
    try {
      model = await pageModel(pageDeps, req.params.ref, req.params.key, {});
    } catch (again) {
      // A bad form posted to an address with no basket (or a closed shop): that refusal is the page.
      if (again instanceof DomainError && again.kind !== err.kind) return refusalPage(req, again);
      throw again;
    }
    return html(ctx, status, shopPage({ ...model, error: message }));
  };
  const back = (req: RouteRequest, anchor = '') => ({
    status: 303,
    body: '',
    headers: { ...PAGE_HEADERS, Location: `/shop/${encodeURIComponent(req.params.ref)}/${encodeURIComponent(req.params.key)}${anchor}` },
  });
  const common = { tag: 'Shop page', auth: 'public' as const, html: true };
  const htmlAnswer = (description: string) => ({ status: 200, description, schema: { type: 'string' } });
  const posted = (path: string, summary: string, fn: (req: RouteRequest, form: URLSearchParams) => Promise<RouteResult>): RouteDef => ({
    ...common,
    method: 'POST',
    path,
    summary,
    description: 'Form post (application/x-www-form-urlencoded) from the shop page; answers 303 to the page, or the page with the refusal.',
    rawBody: true,
    bodyLimitBytes: BODY_LIMIT,
    response: { status: 303, description: 'Back to the page', schema: { type: 'string' } },
    refusals: {
      403: 'the shop is closed: its account is suspended',
      404: 'no basket at this address',
      409: 'the basket is ordered or expired',
      422: "a bad line, or over the shop's quantity caps",
      429: "too many requests, or the address's orders in this shop for the hour (Retry-After)",
    },
    handler: page((req) => fn(req, formOf(req))),
  });
  const P = '/shop/{ref}/{key}';
  // A product's address in the shop (the chat catalogue's items link here): shown on GET, a basket
  // opened on it by the form's POST. Unknown or not orderable there: 404.
  const productPage = (fn: (req: RouteRequest) => Promise<RouteResult>) => async (req: RouteRequest) => {
    try {
      return await page(fn)(req);
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'not_found')
        return html(req.ctx, 404, noticePage('Product not found', 'This shop does not offer this product.'));
      throw err;
    }
  };
  const PRODUCT = '/shop/{catalogue}/p/{sku}';
  return [
    {
      ...common,
      method: 'GET',
      path: PRODUCT,
      summary: "A product's page in the shop (the address the chat catalogue links to)",
      query: { type: 'object', properties: {} },
      response: htmlAnswer('HTML page'),
      refusals: {
        403: 'the shop is closed: its account is suspended (an HTML page)',
        404: 'no such product in this shop (an HTML page)',
        429: 'too many requests (an HTML page)',
      },
      handler: productPage(async (req) => {
        const p = await storefrontProduct(deps.orm.em.fork(), req.params.catalogue, req.params.sku);
        return html(
          req.ctx,
          200,
          productLandingPage({
            shopName: p.shop_name,
            name: p.name,
            description: p.description,
            imageUrl: p.image_url,
            priceMinor: Number(p.sale_price ?? p.price),
            currency: p.currency,
            action: `/shop/${encodeURIComponent(req.params.catalogue)}/p/${encodeURIComponent(req.params.sku)}`,
          }),
        );
      }),
    },
    {
      ...common,
      method: 'POST',
      path: PRODUCT,
      summary: 'Open a basket on the product and go to its page',
      rawBody: true,
      bodyLimitBytes: BODY_LIMIT,
      response: { status: 303, description: "To the new basket's page, on the product", schema: { type: 'string' } },
      refusals: {
        403: 'the shop is closed: its account is suspended',
        404: 'no such product in this shop',
        429: "too many requests, or the address's baskets in this shop for the hour (Retry-After)",
      },
      handler: productPage(async (req) => ({
        status: 303,
        body: '',
        headers: { ...PAGE_HEADERS, Location: await openStorefrontBasket(pageDeps, req.params.catalogue, req.params.sku, req.ctx.ip) },
      })),
    },
    {
      ...common,
      method: 'GET',
      path: P,
      summary: "The shop page of a basket (a shop link's address)",
      refusals: {
        403: 'the shop is closed: its account is suspended (an HTML page)',
        404: 'no basket at this address (an HTML page)',
        429: 'too many requests (an HTML page)',
      },
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
      response: htmlAnswer('HTML page'),
      handler: page(async (req) => {
        const q = req.query as { category?: string; product?: string; menu?: string };
        const model = await pageModel(pageDeps, req.params.ref, req.params.key, {
          category: q.category,
          product: q.product,
          menu: q.menu !== undefined,
        });
        return html(req.ctx, 200, shopPage(model));
      }),
    },
    posted(`${P}/items`, 'Add a line: product_id, variant_id, addon_id (repeated), quantity, note', async (req, form) => {
      const productId = intOf(form.get('product_id'));
      const quantity = intOf(form.get('quantity') ?? '1');
      if (productId === null) throw new DomainError('invalid', 'Choose a product.', { errors: { product_id: ['Choose a product.'] } });
      if (quantity === null || quantity < 1)
        throw new DomainError('invalid', 'The quantity must be at least 1.', {
          errors: { quantity: ['The quantity must be at least 1.'] },
        });
      const addonIds = form.getAll('addon_id').map(intOf);
      if (addonIds.some((a) => a === null))
        throw new DomainError('invalid', 'Unknown add-on.', { errors: { addon_id: ['Unknown add-on.'] } });
      const variant = form.get('variant_id');
      const variantId = variant === null || variant === '' ? null : intOf(variant);
      if (variant !== null && variant !== '' && variantId === null)
        throw new DomainError('invalid', 'Unknown size.', { errors: { variant_id: ['Unknown size.'] } });
      await addFromPage(pageDeps, req.params.ref, req.params.key, {
        productId,
        variantId,
        addonIds: addonIds as number[],
        quantity,
        note: form.get('note'),
      });
      return back(req, '?menu=1#basket');
    }),
    posted(`${P}/items/{item}/remove`, 'Remove a line', async (req) => {
      const item = intOf(req.params.item);
      if (item === null) throw new DomainError('not_found', 'Basket line not found.');
      await removeFromPage(pageDeps, req.params.ref, req.params.key, item);
      return back(req, '?menu=1#basket');
    }),
    posted(`${P}/note`, "Set the basket's note", async (req, form) => {
      await noteFromPage(pageDeps, req.params.ref, req.params.key, form.get('note') ?? '');
      return back(req, '?menu=1#basket');
    }),
    posted(`${P}/submit`, 'Send the basket as an order (the note sent with it is saved first)', async (req, form) => {
      const note = form.get('note');
      if (note !== null) await noteFromPage(pageDeps, req.params.ref, req.params.key, note);
      await submitFromPage(pageDeps, req.params.ref, req.params.key, req.ctx.ip);
      return back(req);
    }),
  ];
}
