// The basket's rules (Resources > Cart; notes §2.7), pure: what a line costs, how refs are made and
// read, what a shop link may carry. Prices are always the service's: a size's price replaces the
// product's, each add-on adds to it, and nothing a customer posts is ever taken as an amount.

import { BASKET_LINES_MAX, LINE_QUANTITY_MAX } from '../catalogues/index.js';
import { currencyExponent } from '../orders/index.js';

/** A basket ref: 5 characters without look-alikes (no 0/O, 1/I/L, and no U), upper case. */
export const REF_ALPHABET = 'ABCDEFGHJKMNPQRSTVWXYZ23456789';
export const REF_LENGTH = 5;

export const CART_LIMITS = {
  /** Lines a shop link may carry (a basket is a handful of lines; a payload of thousands is a mistake or abuse). */
  linkItems: 100,
  /** Lines a basket may hold, through the link and the page together. */
  cartLines: BASKET_LINES_MAX,
  quantityMax: LINE_QUANTITY_MAX,
  noteMax: 1000,
  lineNoteMax: 500,
  addonsPerLine: 20,
} as const;

/** The length of the window the per-address limits count in. */
export const ADDRESS_WINDOW_SECONDS = 3600;

export interface BasketCaps {
  maxLineQuantity: number;
  maxBasketQuantity: number;
}

/**
 * The quantity caps broken by a basket holding `held` units that takes `adding` (per line), or null.
 * `lineKey(i)` names the field of line i; the basket's own problem is filed under `basketKey`.
 */
export function basketCapProblems(
  held: number,
  adding: readonly number[],
  caps: BasketCaps,
  lineKey: (i: number) => string,
  basketKey: string,
): Record<string, string[]> | null {
  const errors: Record<string, string[]> = {};
  adding.forEach((q, i) => {
    if (q > caps.maxLineQuantity) errors[lineKey(i)] = [`This shop sells at most ${caps.maxLineQuantity} of one item per line.`];
  });
  const total = adding.reduce((n, q) => n + q, held);
  if (!Object.keys(errors).length && total > caps.maxBasketQuantity)
    errors[basketKey] = [`A basket in this shop holds at most ${caps.maxBasketQuantity} items in all.`];
  return Object.keys(errors).length ? errors : null;
}

/**
 * A ref from random bytes (one byte per character; the caller passes REF_LENGTH of them). The
 * modulo bias over 30 symbols is negligible for an identifier that is unique per account and is
 * never the page's secret. A ref of digits only is refused (null) so a ref never reads as an id.
 */
export function refFromBytes(bytes: ArrayLike<number>): string | null {
  let ref = '';
  for (let i = 0; i < REF_LENGTH; i++) ref += REF_ALPHABET[bytes[i] % REF_ALPHABET.length];
  return /^\d+$/.test(ref) ? null : ref;
}

/** The ref a caller typed, normalized (any case), or null when it cannot be one. */
export function normalizeRef(text: string): string | null {
  const up = text.trim().toUpperCase();
  if (up.length !== REF_LENGTH) return null;
  for (const c of up) if (!REF_ALPHABET.includes(c)) return null;
  return /^\d+$/.test(up) ? null : up;
}

/** `{ref}` of GET /carts/{ref}: a numeric id, a ref, or nothing the service could hold. */
export function cartKeyOf(text: string): { id: number } | { ref: string } | null {
  if (/^\d{1,15}$/.test(text)) {
    const id = Number(text);
    return id > 0 ? { id } : null;
  }
  const ref = normalizeRef(text);
  return ref ? { ref } : null;
}

export interface PricedProduct {
  price: number;
  salePrice: number | null;
}

/**
 * The unit price of a line, in hundredths: the size's price when a size is chosen (it replaces the
 * product price, sale price included), else the product's sale price when it has one, else its
 * price; plus every add-on.
 */
export function unitPriceOf(product: PricedProduct, size: { price: number } | null, addons: ReadonlyArray<{ price: number }>): number {
  const base = size ? size.price : (product.salePrice ?? product.price);
  return addons.reduce((sum, a) => sum + a.price, base);
}

export const lineTotalOf = (unitPriceMinor: number, quantity: number) => unitPriceMinor * quantity;

/** A link line the shop could not match: reported in `problems[]`, the other lines still go in. */
export type LinkProblem = {
  /** 0-based index of the line in `items`. */
  index: number;
  sku: string;
  reason: string;
};

/**
 * A category's slug from its name: lower case ASCII letters and digits joined by single hyphens
 * (accents dropped), at most 60 characters; `category` when nothing is left. A taken slug gets
 * `-2`, `-3`… from `withSuffix`.
 */
export function slugify(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/g, '');
  return base || 'category';
}
export const withSuffix = (slug: string, n: number) => (n <= 1 ? slug : `${slug}-${n}`);

/**
 * The locale the shop page writes amounts in: the page's own language (its text is English). No shop
 * setting names a locale; one would be read here first.
 */
export const SHOP_LOCALE = 'en';

const formats = new Map<string, Intl.NumberFormat>();

/**
 * An amount in hundredths (the contract's unit for every amount) as the page shows it: Intl's
 * currency format in the currency's own digits (ISO 4217), `$12.50`, `TZS 12,000.00`, `¥100`, `KWD 1.250`.
 */
export function formatMoney(hundredths: number, currency: string, locale = SHOP_LOCALE): string {
  const key = `${locale}|${currency}`;
  let format = formats.get(key);
  if (!format) {
    const digits = currencyExponent(currency);
    format = new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits });
    formats.set(key, format);
  }
  return format.format(hundredths / 100);
}

/**
 * The quiet period after which a basket opened from a chat and left with items is abandoned, and
 * the age (since the last activity) after which a basket that never became an order expires.
 */
export const CART_TIMING_DEFAULTS = { quietSeconds: 24 * 3600, expireSeconds: 7 * 24 * 3600 } as const;
