import { AVAILABILITIES, CATALOGUE_LIMITS, type Availability, type Condition } from './vocabulary.js';

// Pure rules of product feeds (contract: Feed, "column mapping guessed from the feed headers and
// correctable"): which feed column feeds which product field, how feed values become product values
// (prices like `9.99 USD`, Meta and Google availability words), the CSV delimiter, and the guard
// that keeps a broken replace feed from retiring a shop's products.

/** The product fields a feed column can feed (the batch row's fields; visibility and retailer_id are not fed). */
export const FEED_FIELDS = [
  'sku',
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'image_url',
  'availability',
  'condition',
  'inventory',
  'brand',
  'category',
  'product_type',
] as const;
export type FeedField = (typeof FEED_FIELDS)[number];

/** A feed's mapping: feed column (as written in the file) → product field, or null for a column not used. */
export type FeedMapping = Record<string, FeedField | null>;

export const isFeedField = (v: unknown): v is FeedField => typeof v === 'string' && (FEED_FIELDS as readonly string[]).includes(v);

/**
 * A header as the guess compares it: an XML namespace prefix (`g:price`) and a UTF-8 BOM dropped,
 * lower case, every run of non-alphanumerics one underscore (`Variant SKU`, `variant-sku` and
 * `image[0].url` become `variant_sku`, `variant_sku`, `image_0_url`).
 */
export function normaliseHeader(header: string): string {
  return header
    .replace(/^\uFEFF/, '')
    .trim()
    .replace(/^[A-Za-z][\w.-]*:(?=[A-Za-z_])/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * Meta's and Google's attribute names (Meta catalogue fields, Google Merchant Center attributes, as
 * normalised): the second tier of the guess, after our own names.
 */
const PLATFORM_NAMES: Record<string, FeedField> = {
  id: 'sku',
  title: 'name',
  description: 'description',
  availability: 'availability',
  condition: 'condition',
  price: 'price',
  sale_price: 'sale_price',
  image_link: 'image_url',
  brand: 'brand',
  product_type: 'product_type',
  google_product_category: 'category',
  fb_product_category: 'category',
  quantity_to_sell_on_facebook: 'inventory',
  inventory: 'inventory',
};

/**
 * Other spellings seen in shop exports (WooCommerce, Shopify, generic), the third tier. mpn and gtin
 * are not skus: they name the manufacturer's part, which several of a shop's products can share.
 */
const ALIASES: Record<string, FeedField> = {
  item_id: 'sku',
  product_id: 'sku',
  product_code: 'sku',
  productcode: 'sku',
  variant_sku: 'sku',
  offer_id: 'sku',
  retailer_id: 'sku',
  article_number: 'sku',
  item_number: 'sku',
  product_name: 'name',
  product_title: 'name',
  item_name: 'name',
  body_html: 'description',
  body: 'description',
  long_description: 'description',
  product_description: 'description',
  regular_price: 'price',
  variant_price: 'price',
  unit_price: 'price',
  list_price: 'price',
  special_price: 'sale_price',
  sale: 'sale_price',
  currency_code: 'currency',
  price_currency: 'currency',
  image: 'image_url',
  image_src: 'image_url',
  image_0_url: 'image_url',
  images_0: 'image_url',
  images: 'image_url',
  variant_image: 'image_url',
  main_image: 'image_url',
  main_image_url: 'image_url',
  picture: 'image_url',
  thumbnail: 'image_url',
  stock_status: 'availability',
  availability_status: 'availability',
  in_stock: 'availability',
  quantity: 'inventory',
  qty: 'inventory',
  stock: 'inventory',
  stock_quantity: 'inventory',
  inventory_quantity: 'inventory',
  variant_inventory_qty: 'inventory',
  stock_level: 'inventory',
  manufacturer: 'brand',
  vendor: 'brand',
  product_category: 'category',
  categories: 'category',
  type: 'product_type',
  item_condition: 'condition',
};

export interface MappingGuess {
  /** Every header seen, with the field it feeds or null. */
  mapping: FeedMapping;
  /** Headers that feed nothing (reported to the caller; correctable with PATCH mapping). */
  unmapped: string[];
  /** Required fields no header feeds: every row would be refused, so the pull fails instead. */
  missing: FeedField[];
}

/** Fields every row must carry (productRowSchema requires name and price). */
const REQUIRED: FeedField[] = ['name', 'price'];

/**
 * The mapping of a feed's headers. Precedence (first wins, one column per field, header order
 * within a tier): the mapping saved on the feed (a saved null keeps a column out); our own field
 * names; Meta and Google attribute names; the alias table. Columns that differ only by namespace
 * (`title` and `g:title` in one RSS feed) feed the same field; a record uses the first it has.
 * Saved entries for columns this file does not have are kept, so a correction waits for its column.
 */
export function guessMapping(headers: readonly string[], saved: Readonly<Record<string, unknown>> = {}): MappingGuess {
  const mapping: FeedMapping = {};
  const taken = new Set<FeedField>();
  for (const [column, field] of Object.entries(saved)) {
    if (field === null || isFeedField(field)) {
      mapping[column] = field;
      if (field && headers.includes(column)) taken.add(field);
    }
  }
  const open = headers.filter((h, i) => !(h in mapping) && headers.indexOf(h) === i);
  const tiers: Array<(n: string) => FeedField | undefined> = [
    (n) => (isFeedField(n) ? n : undefined),
    (n) => PLATFORM_NAMES[n],
    (n) => ALIASES[n],
  ];
  const takenBy = new Map<FeedField, string>();
  for (const tier of tiers) {
    for (const h of open) {
      if (h in mapping) continue;
      const name = normaliseHeader(h);
      const field = tier(name);
      if (field && (!taken.has(field) || takenBy.get(field) === name)) {
        mapping[h] = field;
        taken.add(field);
        takenBy.set(field, name);
      }
    }
  }
  for (const h of open) if (!(h in mapping)) mapping[h] = null;
  const unmapped = headers.filter((h, i) => mapping[h] === null && headers.indexOf(h) === i);
  return { mapping, unmapped, missing: REQUIRED.filter((f) => !taken.has(f)) };
}

// ---------------------------------------------------------------------------------------------
// Values

const SYMBOLS: Array<[string, string]> = [
  ['US$', 'USD'],
  ['€', 'EUR'],
  ['£', 'GBP'],
  ['¥', 'JPY'],
  ['₹', 'INR'],
  ['₦', 'NGN'],
  ['₱', 'PHP'],
  ['₩', 'KRW'],
  ['R$', 'BRL'],
  ['$', '$'],
];
/** Currencies written with a bare `$`: the shop's own when it is one of them, else USD. */
const DOLLARS = new Set(['USD', 'CAD', 'AUD', 'NZD', 'SGD', 'HKD', 'MXN', 'TWD', 'ARS', 'CLP', 'COP', 'BRL']);

export type PriceResult = { amount: number; currency: string | null } | { problem: string };

/**
 * A feed price in hundredths and its currency, if it names one: `9.99 USD`, `USD 9.99`, `9,99 EUR`,
 * `€9,99`, `$9.99`, `1,234.50`, `1.234,50 EUR`, `1 234,50`, or a JSON number of major units
 * (9.99). The decimal separator is the last `.` or `,` unless that `,` is followed by exactly three
 * digits with nothing after (`1,234` is a thousand). More than two decimals are refused unless zero.
 */
export function parsePrice(input: unknown, o: { defaultCurrency?: string | null } = {}): PriceResult {
  if (typeof input === 'number') {
    if (!Number.isFinite(input) || input < 0) return { problem: 'price must be a number of at least 0' };
    const cents = Math.round(input * 100);
    if (Math.abs(cents - input * 100) > 1e-6) return { problem: 'price has more than two decimals' };
    if (cents > CATALOGUE_LIMITS.priceMax) return { problem: 'price is too large' };
    return { amount: cents, currency: null };
  }
  if (typeof input !== 'string') return { problem: 'price must be text or a number' };
  let text = input.replace(/[\u00A0\u202F]/g, ' ').trim();
  if (!text) return { problem: 'price is empty' };
  let currency: string | null = null;
  const code = /^([A-Za-z]{3})\s*(?=[\d.,])|(?<=[\d.,])\s*([A-Za-z]{3})$/.exec(text);
  if (code) {
    currency = (code[1] ?? code[2]).toUpperCase();
    text = text.replace(code[0], '').trim();
  }
  for (const [symbol, iso] of SYMBOLS) {
    if (text.startsWith(symbol) || text.endsWith(symbol)) {
      const named = iso === '$' ? (o.defaultCurrency && DOLLARS.has(o.defaultCurrency) ? o.defaultCurrency : 'USD') : iso;
      if (currency && currency !== named && iso !== '$') return { problem: `price names two currencies (${symbol} and ${currency})` };
      currency ??= named;
      text = (text.startsWith(symbol) ? text.slice(symbol.length) : text.slice(0, -symbol.length)).trim();
      break;
    }
  }
  if (text.startsWith('-')) return { problem: 'price must be at least 0' };
  if (!/^\d[\d.,' ]*$/.test(text)) return { problem: `price "${input.slice(0, 40)}" is not a number` };
  const lastDot = text.lastIndexOf('.');
  const lastComma = text.lastIndexOf(',');
  let decimalAt = Math.max(lastDot, lastComma);
  if (decimalAt === lastComma && lastDot === -1 && /^\d{3}$/.test(text.slice(lastComma + 1))) decimalAt = -1;
  const sep = decimalAt >= 0 ? text[decimalAt] : null;
  // Grouping marks: spaces, apostrophes and whichever of `.`/`,` is not the decimal separator.
  const whole = (decimalAt >= 0 ? text.slice(0, decimalAt) : text).replace(/[ ']/g, '');
  const fraction = decimalAt >= 0 ? text.slice(decimalAt + 1) : '';
  const grouping = sep === ',' ? '.' : ',';
  if ((sep && whole.includes(sep)) || !/^\d*$/.test(fraction)) return { problem: `price "${input.slice(0, 40)}" is not a number` };
  const digits = whole.split(grouping).join('');
  if (!/^\d+$/.test(digits)) return { problem: `price "${input.slice(0, 40)}" is not a number` };
  if (fraction.length > 2 && /[1-9]/.test(fraction.slice(2))) return { problem: 'price has more than two decimals' };
  const cents = Number(digits) * 100 + Number((fraction + '00').slice(0, 2));
  if (!Number.isSafeInteger(cents) || cents > CATALOGUE_LIMITS.priceMax) return { problem: 'price is too large' };
  return { amount: cents, currency };
}

const word = (v: string) =>
  v
    .trim()
    .toLowerCase()
    .replace(/^https?:\/\/schema\.org\//, '')
    .replace(/[\s_-]+/g, '');

const AVAILABILITY_WORDS: Record<string, Availability> = {
  instock: 'in stock',
  available: 'in stock',
  yes: 'in stock',
  limitedavailability: 'in stock',
  onlineonly: 'in stock',
  outofstock: 'out of stock',
  soldout: 'out of stock',
  unavailable: 'out of stock',
  no: 'out of stock',
  preorder: 'preorder',
  presale: 'preorder',
  availablefororder: 'available for order',
  backorder: 'available for order',
  onbackorder: 'available for order',
  discontinued: 'discontinued',
};

/** The contract's availability for a feed's word (Meta `in stock`, Google `in_stock`, schema.org `InStock`…), or null. */
export function availabilityOf(v: string): Availability | null {
  const w = word(v);
  return AVAILABILITY_WORDS[w] ?? AVAILABILITIES.find((a) => word(a) === w) ?? null;
}

const CONDITION_WORDS: Record<string, Condition> = {
  new: 'new',
  brandnew: 'new',
  newcondition: 'new',
  refurbished: 'refurbished',
  refurbishedcondition: 'refurbished',
  renewed: 'refurbished',
  used: 'used',
  usedcondition: 'used',
  secondhand: 'used',
  preowned: 'used',
  damagedcondition: 'used',
};

/** The contract's condition for a feed's word (`new`, schema.org `NewCondition`, `pre-owned`…), or null. */
export function conditionOf(v: string): Condition | null {
  return CONDITION_WORDS[word(v)] ?? null;
}

// ---------------------------------------------------------------------------------------------
// Rows

/** Text that can be stored: PostgreSQL refuses NUL in jsonb, and an unpaired surrogate is not text. */
const clean = (s: string) =>
  s.replace(/\0/g, '').replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** A value as text: strings trimmed, numbers written out, the first of a list, an object's url/href/value. */
function textOf(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'string') return clean(v).trim() || null;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.length ? textOf(v[0]) : null;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    for (const k of ['url', 'href', 'src', 'value', '#text', 'name']) if (k in o) return textOf(o[k]);
  }
  return null;
}

export interface RowProblem {
  field: FeedField;
  reason: string;
}

export interface MappedRow {
  /** The product row (productRowSchema's shape), values converted; a value that could not be converted is left as found. */
  data: Record<string, unknown>;
  problems: RowProblem[];
}

/**
 * One feed record as a product row. Empty cells are left out (the product keeps or derives them);
 * a value that cannot be converted stays as written, so the row is refused at ingest with the rest
 * of its problems (one bad row is one rejected row). A relative image address is resolved against
 * the feed URL.
 */
export function mapRecord(
  record: Readonly<Record<string, unknown>>,
  mapping: FeedMapping,
  o: { defaultCurrency?: string | null; baseUrl?: string } = {},
): MappedRow {
  const data: Record<string, unknown> = {};
  const problems: RowProblem[] = [];
  const raw: Partial<Record<FeedField, unknown>> = {};
  for (const [column, value] of Object.entries(record)) {
    const field = mapping[column];
    if (field && raw[field] === undefined) raw[field] = value;
  }
  let priceCurrency: string | null = null;
  for (const field of FEED_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    // JSON feeds may give a price as {amount, currency}.
    const isMoneyObject = typeof value === 'object' && value !== null && !Array.isArray(value) && ('amount' in value || 'value' in value);
    const text = field === 'price' || field === 'sale_price' ? null : textOf(value);
    switch (field) {
      case 'price':
      case 'sale_price': {
        const o2 = isMoneyObject ? (value as Record<string, unknown>) : null;
        const given = o2 ? (o2.amount ?? o2.value) : typeof value === 'string' ? clean(value) : value;
        if (given === null || given === '' || (typeof given === 'string' && !given.trim())) break;
        const parsed = parsePrice(typeof given === 'string' || typeof given === 'number' ? given : textOf(given), o);
        if ('problem' in parsed) {
          problems.push({ field, reason: parsed.problem });
          data[field] = typeof given === 'string' ? given.slice(0, 100) : given;
          break;
        }
        data[field] = parsed.amount;
        const named = o2 && typeof o2.currency === 'string' ? o2.currency.toUpperCase() : parsed.currency;
        if (named) {
          if (priceCurrency && priceCurrency !== named)
            problems.push({ field, reason: `${field} is in ${named}, price in ${priceCurrency}` });
          priceCurrency ??= named;
        }
        break;
      }
      case 'availability':
        if (text) {
          const a = availabilityOf(text);
          if (!a) problems.push({ field, reason: `availability "${text.slice(0, 40)}" is not one of ${AVAILABILITIES.join(', ')}` });
          data.availability = a ?? text.slice(0, 100);
        }
        break;
      case 'condition':
        if (text) {
          const c = conditionOf(text);
          if (!c) problems.push({ field, reason: `condition "${text.slice(0, 40)}" is not one of new, refurbished, used` });
          data.condition = c ?? text.slice(0, 100);
        }
        break;
      case 'inventory':
        if (text) {
          const n = /^\d+(?:\.0+)?$/.test(text) ? Number(text.split('.')[0]) : NaN;
          if (!Number.isSafeInteger(n) || n > CATALOGUE_LIMITS.inventoryMax) {
            problems.push({ field, reason: `inventory "${text.slice(0, 40)}" is not a whole number of at least 0` });
            data.inventory = text.slice(0, 100);
          } else data.inventory = n;
        }
        break;
      case 'image_url':
        if (text) data.image_url = resolveUrl(text, o.baseUrl);
        break;
      case 'currency':
        if (text) data.currency = /^[A-Za-z]{3}$/.test(text) ? text.toUpperCase() : text;
        break;
      default:
        if (text) data[field] = text;
    }
  }
  if (priceCurrency) {
    if (typeof data.currency === 'string' && data.currency !== priceCurrency)
      problems.push({ field: 'currency', reason: `price is in ${priceCurrency}, currency says ${data.currency}` });
    data.currency ??= priceCurrency;
  }
  return { data, problems };
}

function resolveUrl(text: string, base?: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(text) || !base) return text;
  try {
    return new URL(text, base).toString();
  } catch {
    return text;
  }
}

// ---------------------------------------------------------------------------------------------
// CSV delimiter

const DELIMITERS = [',', ';', '\t', '|', '~'] as const;

/**
 * The delimiter of a CSV feed from its first line (Meta's AUTODETECT: comma, semicolon, tab, bar,
 * tilde): the candidate seen most often outside quotes; a comma when none is.
 */
export function detectDelimiter(firstLine: string): string {
  const counts = new Map<string, number>();
  let quoted = false;
  for (const ch of firstLine.replace(/^\uFEFF/, '')) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (DELIMITERS as readonly string[]).includes(ch)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
  }
  let best = ',';
  let most = 0;
  for (const d of DELIMITERS) {
    const n = counts.get(d) ?? 0;
    if (n > most) [best, most] = [d, n];
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Format

export const FEED_FORMATS = ['csv', 'xml', 'json'] as const;
export type FeedFormat = (typeof FEED_FORMATS)[number];

/**
 * What a feed body is, from its first bytes (BOM and blanks skipped) and the Content-Type: an HTML
 * page (an error page, a login wall, a shop's front page) is never a feed. The bytes decide; the
 * type only names HTML that does not start like a document.
 */
export function sniffFormat(head: string, contentType = ''): FeedFormat | 'html' {
  const start = head.replace(/^\uFEFF/, '').trimStart();
  const lower = start.slice(0, 512).toLowerCase();
  const type = contentType.toLowerCase();
  if (/^<!doctype\s+html|^<html[\s>]|^<head[\s>]|^<body[\s>]/.test(lower)) return 'html';
  if (start.startsWith('<')) {
    if (type.includes('text/html') && !/<(rss|feed|channel|item|entry|products?)[\s>]/.test(lower)) return 'html';
    return 'xml';
  }
  if (start.startsWith('{') || start.startsWith('[')) return 'json';
  return 'csv';
}

// ---------------------------------------------------------------------------------------------
// The shrink guard

/** A replace pull is held against the last completed one only when that had at least this many rows. */
export const SHRINK_GUARD_MIN_ROWS = 20;
/** …and refused when it keeps less than this share of them. */
export const SHRINK_GUARD_SHARE = 0.5;

/**
 * Why a pull must fail rather than be applied, or null. A replace feed retires every product it
 * does not list, so an empty file (an export that crashed, a cleared sheet) or one that suddenly
 * lost more than half of its usable rows is far more likely broken than true: the run fails and
 * nothing is retired. Upsert feeds retire nothing and are never held. `usable` counts rows that
 * would be stored; `lastUsable` is the last completed pull's count.
 */
export function shrinkRefusal(mode: 'replace' | 'upsert', usable: number, lastUsable: number | null): string | null {
  if (mode !== 'replace') return null;
  if (usable === 0) return 'the feed has no usable products; a replace pull would retire every product, so nothing was applied';
  if (lastUsable !== null && lastUsable >= SHRINK_GUARD_MIN_ROWS && usable < lastUsable * SHRINK_GUARD_SHARE)
    return `the feed shrank from ${lastUsable} to ${usable} usable products (more than half gone); nothing was applied or retired`;
  return null;
}
