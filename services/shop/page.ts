import { createHash } from 'node:crypto';
import { formatMoney } from '../../domain/shop/cart.js';
import type { CartView } from './carts.js';
import type { CategoryRow, MenuProduct } from './menu.js';

// The shop page, server-rendered: the menu by category, a product with its sizes and add-ons, the
// basket with its note, and the submit. Plain forms that post ids (never amounts), no script, one
// inline style allowed by its hash. Every text from the catalogue or the customer is escaped.

export const escapeHtml = (s: unknown) =>
  String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = [
  '*{box-sizing:border-box}body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#f6f6f4}',
  'header{background:#14532d;color:#fff;padding:12px 16px;position:sticky;top:0;z-index:2;display:flex;justify-content:space-between;align-items:center;gap:8px}',
  'header h1{font-size:18px;margin:0}header a{color:#fff}main{max-width:640px;margin:0 auto;padding:12px}',
  'nav{display:flex;gap:8px;overflow-x:auto;padding:4px 0 12px}nav a{white-space:nowrap;padding:6px 12px;border-radius:16px;background:#fff;border:1px solid #ccc;color:#1d1d1f;text-decoration:none}',
  'nav a.on{background:#14532d;color:#fff;border-color:#14532d}.card{background:#fff;border-radius:10px;padding:12px;margin:0 0 10px;border:1px solid #e3e3e0}',
  '.row{display:flex;justify-content:space-between;gap:8px;align-items:baseline}.muted{color:#666;font-size:14px}.price{font-weight:600;white-space:nowrap}',
  'label.opt{display:flex;justify-content:space-between;gap:8px;padding:10px;border:1px solid #ddd;border-radius:8px;margin:6px 0}',
  'input[type=number],textarea,input[type=text]{width:100%;font:inherit;padding:10px;border:1px solid #bbb;border-radius:8px}',
  'button,.btn{display:inline-block;font:inherit;padding:12px 16px;border-radius:8px;border:0;background:#14532d;color:#fff;text-decoration:none;min-height:44px}',
  'button.wide{width:100%;margin-top:10px}button.link{background:none;color:#b91c1c;padding:4px;min-height:0}',
  '.err{background:#fee2e2;color:#7f1d1d;padding:10px;border-radius:8px}.ok{background:#dcfce7;color:#14532d;padding:10px;border-radius:8px}',
  'h2{font-size:18px;margin:16px 0 8px}fieldset{border:0;padding:0;margin:8px 0}legend{font-weight:600}',
  'button.alt{background:#555}button:disabled{background:#d6d6d2;color:#6b6b68;cursor:not-allowed}',
  // A picture keeps its frame whatever happens to the file: a broken or refused one shows its alt text on the frame's colour.
  '.pic{position:relative;overflow:hidden;background:#ecebe6;border-radius:8px;aspect-ratio:4/3;margin:0 0 8px}',
  '.pic img{display:block;width:100%;height:100%;object-fit:cover;color:#666;font-size:14px}',
  '.pic img::after{content:attr(alt);position:absolute;inset:0;display:flex;align-items:center;justify-content:center;padding:8px;text-align:center;background:#ecebe6}',
  '.thumb{flex:none;width:64px;margin:0}.product .row{align-items:center}.product .who{flex:1;min-width:0}',
  'a.name{color:inherit;font-weight:600}.was{color:#666;font-weight:400;margin-right:6px}.now{color:#b91c1c}',
  '.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}',
].join('');

/**
 * The page's policy: its one style (by hash), images over https, forms only to this service, no
 * script, no frames. With Referrer-Policy no-referrer the page key never leaves in a Referer.
 */
export const PAGE_HEADERS = {
  'Content-Security-Policy': [
    "default-src 'none'",
    `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
    'img-src https: data:',
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

function layout(title: string, header: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${header}<main>${body}</main></body></html>`;
}

/** A page with one message (an unknown basket, a refusal, too many requests). */
export function noticePage(title: string, text: string): string {
  return layout(title, `<header><h1>${escapeHtml(title)}</h1></header>`, `<div class="card"><p>${escapeHtml(text)}</p></div>`);
}

export interface ShopPageModel {
  shopName: string;
  /** `/shop/<ref>/<key>`: where the page's forms post. */
  base: string;
  cart: CartView;
  categories: CategoryRow[];
  products: MenuProduct[];
  categoryId: number | null;
  productId: number | null;
  error?: string | null;
  orderId?: number | null;
}

const money = (hundredths: number | string, currency: string) => escapeHtml(formatMoney(Number(hundredths), currency));

/** A price, and when a lower sale price applies, the regular one struck out beside it. */
function priceTag(regular: number | string, sale: number | string | null, currency: string): string {
  if (sale === null || Number(sale) >= Number(regular)) return money(regular, currency);
  return `<s class="was"><span class="sr">Was </span>${money(regular, currency)}</s><span class="now"><span class="sr">now </span>${money(sale, currency)}</span>`;
}

/** What a product costs as the menu shows it: from its lowest size, else its price (with its sale price). */
function productPrice(p: MenuProduct, currency: string): string {
  if (p.variants.length) {
    const low = Math.min(...p.variants.map((v) => v.price));
    return p.variants.length > 1 ? `from ${money(low, currency)}` : money(low, currency);
  }
  return priceTag(p.price, p.sale_price, currency);
}

/**
 * A product's picture in its frame, or nothing: only https addresses (the page's policy loads no
 * other), lazily, its name as the alt text the frame shows should the file not load.
 */
function picture(url: string | null, name: string, extraClass = ''): string {
  if (!url || !/^https:\/\//i.test(url)) return '';
  return `<div class="pic${extraClass}"><img src="${escapeHtml(url)}" alt="${escapeHtml(name)}" loading="lazy" decoding="async"></div>`;
}

export function shopPage(m: ShopPageModel): string {
  const cur = m.cart.currency;
  const editable = ['open', 'sent', 'abandoned'].includes(m.cart.status);
  const count = m.cart.items.reduce((n, i) => n + i.quantity, 0);
  const header = `<header><h1>${escapeHtml(m.shopName)}</h1><a href="#basket" id="basket-link">Basket (${count}) · ${money(m.cart.subtotal_minor, cur)}</a></header>`;
  const parts: string[] = [];
  if (m.error) parts.push(`<p class="err" role="alert" id="error">${escapeHtml(m.error)}</p>`);
  if (m.cart.status === 'ordered')
    parts.push(
      `<p class="ok" id="ordered">Thank you! Your order${m.cart.order_id ? ` #${escapeHtml(m.cart.order_id)}` : ''} has been sent to the shop.</p>`,
    );
  if (m.cart.status === 'expired') parts.push('<p class="err" id="expired">This basket has expired. Ask the shop for a new link.</p>');
  if (editable) {
    const product = m.productId === null ? undefined : m.products.find((p) => Number(p.id) === m.productId);
    parts.push(product ? productView(m, product) : menuView(m));
  }
  parts.push(basketView(m, editable));
  return layout(m.shopName, header, parts.join(''));
}

function menuView(m: ShopPageModel): string {
  const catHref = (c: CategoryRow) => `${m.base}?category=${encodeURIComponent(c.slug ?? String(c.id))}`;
  const nav = m.categories.length
    ? `<nav aria-label="Categories"><a href="${m.base}?menu=1"${m.categoryId === null ? ' class="on"' : ''}>All</a>${m.categories
        .map((c) => `<a href="${escapeHtml(catHref(c))}"${c.id === m.categoryId ? ' class="on"' : ''}>${escapeHtml(c.name)}</a>`)
        .join('')}</nav>`
    : '';
  const shown = m.categoryId === null ? m.products : m.products.filter((p) => p.category_id === m.categoryId);
  const cards = shown
    .map((p) => {
      // An orderable product's name and picture open it, as its button does.
      const href = `${m.base}?product=${Number(p.id)}`;
      const thumb = picture(p.image_url, p.name, ' thumb');
      const name = p.orderable ? `<a class="name" href="${href}">${escapeHtml(p.name)}</a>` : `<strong>${escapeHtml(p.name)}</strong>`;
      return `<div class="card product" data-sku="${escapeHtml(p.sku)}"><div class="row">${p.orderable && thumb ? `<a href="${href}" tabindex="-1" aria-hidden="true">${thumb}</a>` : thumb}<span class="who">${name}</span><span class="price">${productPrice(p, m.cart.currency)}</span></div>
${p.description ? `<p class="muted">${escapeHtml(p.description.slice(0, 160))}</p>` : ''}
${p.orderable ? `<a class="btn" href="${href}">Choose</a>` : `<span class="muted">${escapeHtml(p.availability)}</span>`}</div>`;
    })
    .join('');
  return `${nav}<section id="menu"><h2>Menu</h2>${cards || '<p class="muted">Nothing on the menu yet.</p>'}</section>`;
}

function productView(m: ShopPageModel, p: MenuProduct): string {
  const cur = m.cart.currency;
  const sizes = p.variants.length
    ? `<fieldset><legend>Size</legend>${p.variants
        .map(
          (v, i) =>
            `<label class="opt"><span><input type="radio" name="variant_id" value="${v.id}"${i === 0 ? ' checked' : ''}> ${escapeHtml(v.name)}</span><span class="price">${money(v.price, cur)}</span></label>`,
        )
        .join('')}</fieldset>`
    : '';
  const addons = p.addons.length
    ? `<fieldset><legend>Add-ons</legend>${p.addons
        .map(
          (a) =>
            `<label class="opt"><span><input type="checkbox" name="addon_id" value="${a.id}"> ${escapeHtml(a.name)}</span><span class="price">+${money(a.price, cur)}</span></label>`,
        )
        .join('')}</fieldset>`
    : '';
  return `<p><a href="${m.base}?menu=1">← Menu</a></p><section class="card" id="product"><div class="row"><h2>${escapeHtml(p.name)}</h2><span class="price">${productPrice(p, cur)}</span></div>
${picture(p.image_url, p.name)}
${p.description ? `<p>${escapeHtml(p.description)}</p>` : ''}
<form method="post" action="${m.base}/items"><input type="hidden" name="product_id" value="${Number(p.id)}">${sizes}${addons}
<label>Quantity <input type="number" name="quantity" value="1" min="1" max="999" inputmode="numeric"></label>
<label>Note for this item <input type="text" name="note" maxlength="500" placeholder="e.g. no sugar"></label>
<button class="wide" id="add" type="submit">Add to basket</button></form></section>`;
}

function basketView(m: ShopPageModel, editable: boolean): string {
  const cur = m.cart.currency;
  const lines = m.cart.items
    .map(
      (
        i,
      ) => `<div class="card line" data-line="${i.id}"><div class="row"><strong>${i.quantity} × ${editable ? `<a class="name" href="${m.base}?product=${i.product_id}">${escapeHtml(i.name)}</a>` : escapeHtml(i.name)}${i.variant ? ` (${escapeHtml(i.variant.name)})` : ''}</strong><span class="price">${money(i.line_total_minor, cur)}</span></div>
${i.options.length ? `<div class="muted">+ ${i.options.map((o) => escapeHtml(o.name)).join(', ')}</div>` : ''}${i.note ? `<div class="muted">“${escapeHtml(i.note)}”</div>` : ''}
${editable ? `<form method="post" action="${m.base}/items/${i.id}/remove"><button class="link" type="submit">Remove</button></form>` : ''}</div>`,
    )
    .join('');
  const total = `<div class="row"><strong>Subtotal</strong><span class="price" id="subtotal">${money(m.cart.subtotal_minor, cur)}</span></div>`;
  const form = editable
    ? `<form method="post" action="${m.base}/submit"><label for="note">Note for the shop</label><textarea id="note" name="note" rows="2" maxlength="1000">${escapeHtml(m.cart.note ?? '')}</textarea>
<button class="wide alt" type="submit" formaction="${m.base}/note" id="save-note">Save note</button>
<button class="wide" type="submit" id="submit"${m.cart.items.length ? '' : ' disabled aria-describedby="submit-why"'}>Send order</button>${m.cart.items.length ? '' : '<p class="muted" id="submit-why">Add something to your basket to send an order.</p>'}</form>`
    : m.cart.note
      ? `<p class="muted">Note: ${escapeHtml(m.cart.note)}</p>`
      : '';
  return `<section id="basket"><h2>Your basket</h2>${lines || '<p class="muted">Your basket is empty.</p>'}<div class="card">${total}${form}</div></section>`;
}

/** A product's own address in the shop: the product and a button that opens a basket on it. */
export function productLandingPage(p: {
  shopName: string;
  name: string;
  description: string | null;
  imageUrl: string | null;
  /** In hundredths, as every amount. */
  price: number;
  salePrice: number | null;
  currency: string;
  action: string;
}): string {
  const body =
    `<div class="card" id="product">${picture(p.imageUrl, p.name)}<h2>${escapeHtml(p.name)}</h2><p class="price">${priceTag(p.price, p.salePrice, p.currency)}</p>` +
    (p.description ? `<p>${escapeHtml(p.description)}</p>` : '') +
    `<form method="post" action="${escapeHtml(p.action)}"><button class="wide" type="submit" id="order-this">Order this</button></form></div>`;
  return layout(p.name, `<header><h1>${escapeHtml(p.shopName)}</h1></header>`, body);
}
