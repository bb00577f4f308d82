import { AVAILABILITIES, CATALOGUE_LIMITS, CONDITIONS, type Availability, type Condition, type FieldDrift } from './vocabulary.js';

// The hourly drift comparison (States > Product listing): a platform copy against the service copy,
// field by field. Stock (inventory) and image_url are never compared: the contract leaves both out,
// inventory because the platform's count moves with its own sales between our pushes, and the image
// because a platform re-hosts it under its own address. Each side is first put in one
// representation (prices in hundredths, availability in the contract's spelling, blank text as
// null), so only a real difference is drift. Decisions: docs/decisions.md, "Catalogue drift".

/** The compared fields, in the contract's product field names (the FieldDrift `field`). */
export const DRIFT_FIELDS = [
  'name',
  'description',
  'price',
  'sale_price',
  'currency',
  'availability',
  'condition',
  'brand',
  'category',
] as const;
export type DriftField = (typeof DRIFT_FIELDS)[number];

/** Our copy of a product, as the comparison needs it (prices in hundredths; brand and category as text). */
export interface OurCopy {
  name: string;
  description: string | null;
  price: number;
  salePrice: number | null;
  currency: string;
  availability: Availability;
  condition: Condition | null;
  brand: string | null;
  category: string | null;
}

/**
 * The platform's copy as an adapter reads it back. A price may come as hundredths or as the
 * provider's string ('12.50 USD', 'USD 12.50', '$1,234.50'); spellings are the provider's own.
 */
export interface TheirCopy {
  name: string | null;
  description: string | null;
  price: number | string | null;
  salePrice: number | string | null;
  currency: string | null;
  availability: string | null;
  condition: string | null;
  brand: string | null;
  category: string | null;
}

/** Blank text is no text: a platform that answers '' for a field we hold as null has not drifted. */
export function text(v: string | null | undefined): string | null {
  if (v === null || v === undefined) return null;
  const t = v.trim();
  return t === '' ? null : t;
}

/**
 * A price as hundredths and, when the string names one, its currency: 1250, '12.50 USD', '12.5',
 * 'USD 12.50', '$1,234.50'. Null when no amount can be read.
 */
export function priceOf(v: number | string | null | undefined): { amount: number; currency: string | null } | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? { amount: v, currency: null } : null;
  const m = /(\d[\d,]*)(?:\.(\d{1,2}))?/.exec(v);
  if (!m) return null;
  const whole = Number(m[1].replace(/,/g, ''));
  if (!Number.isSafeInteger(whole)) return null;
  const cents = m[2] === undefined ? 0 : Number(m[2].padEnd(2, '0'));
  return { amount: whole * 100 + cents, currency: /\b([A-Za-z]{3})\b/.exec(v)?.[1]?.toUpperCase() ?? null };
}

/** Other spellings of the contract's availabilities: Google's underscores, its backorder, case. */
const AVAILABILITY_ALIASES: Record<string, Availability> = {
  instock: 'in stock',
  outofstock: 'out of stock',
  soldout: 'out of stock',
  'sold out': 'out of stock',
  backorder: 'available for order',
  'pre order': 'preorder',
  'pre-order': 'preorder',
};

/** An availability in the contract's spelling, or the platform's own word (lower case) when it has none of ours. */
export function availabilityOf(v: string | null | undefined): string | null {
  const t = text(v)?.toLowerCase().replace(/_/g, ' ').replace(/\s+/g, ' ');
  if (!t) return null;
  if ((AVAILABILITIES as readonly string[]).includes(t)) return t;
  return AVAILABILITY_ALIASES[t] ?? AVAILABILITY_ALIASES[t.replace(/ /g, '')] ?? t;
}

export const isAvailability = (v: unknown): v is Availability => (AVAILABILITIES as readonly unknown[]).includes(v);
export const isCondition = (v: unknown): v is Condition => (CONDITIONS as readonly unknown[]).includes(v);

/**
 * The fields a platform copy differs in, `ours` and `theirs` each in our representation.
 *
 * - Text is trimmed and blank is null. Names, descriptions, brands and categories compare exactly
 *   otherwise (a changed letter case is a change the shop may care about).
 * - A field the platform must have (Meta requires a description and a condition) is sent filled
 *   when we hold none: our null description matches theirs equal to our name, our null condition
 *   matches `new`. What we send is not drift.
 * - Name, price, currency, availability and condition are required on the platform: a null there
 *   means the field was not read back, not that it was cleared, so it is not compared. The optional
 *   fields (description, sale_price, brand, category) compare null as a value: a sale price removed
 *   on the platform is drift.
 * - A currency missing from the platform copy is taken from its price string ('12.50 USD').
 */
export function compareCopies(ours: OurCopy, theirs: TheirCopy): FieldDrift[] {
  const drift: FieldDrift[] = [];
  const differ = (field: DriftField, o: unknown, t: unknown) => {
    if (o !== t) drift.push({ field, ours: o, theirs: t });
  };

  const theirName = text(theirs.name);
  if (theirName !== null) differ('name', ours.name, theirName);

  const ourDescription = text(ours.description);
  const theirDescription = text(theirs.description);
  if (!(ourDescription === null && (theirDescription === null || theirDescription === text(ours.name)))) {
    differ('description', ourDescription, theirDescription);
  }

  const price = priceOf(theirs.price);
  if (price) differ('price', ours.price, price.amount);
  const sale = priceOf(theirs.salePrice);
  differ('sale_price', ours.salePrice, sale?.amount ?? null);

  const theirCurrency = text(theirs.currency)?.toUpperCase() ?? price?.currency ?? null;
  if (theirCurrency !== null) differ('currency', ours.currency.toUpperCase(), theirCurrency);

  const availability = availabilityOf(theirs.availability);
  if (availability !== null) differ('availability', ours.availability, availability);

  const condition = text(theirs.condition)?.toLowerCase() ?? null;
  if (condition !== null) differ('condition', ours.condition ?? 'new', condition);

  differ('brand', text(ours.brand), text(theirs.brand));
  differ('category', text(ours.category), text(theirs.category));
  return drift;
}

/** The same drift, whatever order it was found in: `a` and `b` differ in the same fields the same way. */
export function sameDrift(a: readonly FieldDrift[] | null | undefined, b: readonly FieldDrift[] | null | undefined): boolean {
  const key = (d: readonly FieldDrift[] | null | undefined) =>
    JSON.stringify([...(d ?? [])].sort((x, y) => x.field.localeCompare(y.field)).map((f) => [f.field, f.ours ?? null, f.theirs ?? null]));
  return key(a) === key(b);
}

/**
 * What pulling the platform copy in writes to our row (source_of_truth platform): the drifted
 * fields only, each only when our product rules accept it. A platform availability or condition with
 * no word of ours (Meta's `pending`, `used_like_new`), a title longer than our name limit (Meta takes
 * 200, we 100) and the like stay ours; they are answered in `kept` and the listing stays drifted on them.
 */
export function pullInChanges(drift: readonly FieldDrift[]): { changes: Partial<OurCopy>; kept: FieldDrift[] } {
  const changes: Partial<OurCopy> = {};
  const kept: FieldDrift[] = [];
  const L = CATALOGUE_LIMITS;
  const fits = (t: unknown, max: number): t is string => typeof t === 'string' && t.length <= max;
  const amount = (t: unknown): t is number => typeof t === 'number' && Number.isSafeInteger(t) && t >= 0 && t <= L.priceMax;
  for (const d of drift) {
    const t = d.theirs;
    switch (d.field as DriftField) {
      case 'name':
        if (fits(t, L.nameMax) && t !== '') changes.name = t;
        else kept.push(d);
        break;
      case 'description':
        if (t === null || fits(t, L.descriptionMax)) changes.description = t;
        else kept.push(d);
        break;
      case 'price':
        if (amount(t)) changes.price = t;
        else kept.push(d);
        break;
      case 'sale_price':
        if (t === null || amount(t)) changes.salePrice = t;
        else kept.push(d);
        break;
      case 'currency':
        if (typeof t === 'string' && /^[A-Z]{3}$/.test(t)) changes.currency = t;
        else kept.push(d);
        break;
      case 'availability':
        if (isAvailability(t)) changes.availability = t;
        else kept.push(d);
        break;
      case 'condition':
        if (isCondition(t)) changes.condition = t;
        else kept.push(d);
        break;
      case 'brand':
        if (t === null || fits(t, L.brandMax)) changes.brand = t;
        else kept.push(d);
        break;
      case 'category':
        if (t === null || fits(t, L.categoryMax)) changes.category = t;
        else kept.push(d);
        break;
      default:
        kept.push(d);
    }
  }
  return { changes, kept };
}
