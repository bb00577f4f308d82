// A payment's amounts (Resources > Payment; Conventions: "Payment amount_minor uses 100 minor
// units per major unit for every currency"). amount_minor is the arithmetic; `amount` and
// `refunded` are display strings made from it (docs/payments.md, "Amounts").
//
// The display: Intl.NumberFormat, locale `en`, style currency. Two decimals, except for the
// currencies people write without them (ISO 4217 exponent 0 such as JPY, UGX, RWF, and TZS, whose
// ISO exponent is 2 but whose cents nobody uses), which show none when the amount is whole: TZS
// 12,000 and not TZS 12,000.00. A fraction is never hidden: 1,200,050 minor TZS is "TZS 12,000.50"
// (the scale is 100 for every currency, so there can be one), and a three-decimal currency (KWD)
// shows two, the most the scale can hold.

export const MINOR_PER_MAJOR = 100;

/** Currencies shown without decimals when whole: ISO 4217 exponent 0, and TZS (exponent 2, cents unused). */
const WHOLE_CURRENCIES = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'ISK',
  'JPY',
  'KMF',
  'KRW',
  'PYG',
  'RWF',
  'UGX',
  'UYI',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
  'TZS',
]);

export const isCurrencyCode = (c: string): boolean => /^[A-Z]{3}$/.test(c);

/**
 * One formatter per currency and number of decimals, made once: constructing an Intl.NumberFormat
 * costs about 0.1 ms (most of a page of payments' time, two amounts a row), formatting with one a
 * few microseconds. The codes are ISO 4217's (isKnownCurrency), so the map stays small.
 */
const formats = new Map<string, Intl.NumberFormat>();
function formatOf(code: string, digits: number): Intl.NumberFormat {
  const key = `${code}:${digits}`;
  let format = formats.get(key);
  if (!format) {
    format = new Intl.NumberFormat('en', {
      style: 'currency',
      currency: code,
      currencyDisplay: 'code',
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    });
    formats.set(key, format);
  }
  return format;
}

/** The display string of an amount in minor units (100 a major unit) of `currency`. */
export function displayAmount(minor: number, currency: string): string {
  const code = currency.toUpperCase();
  const whole = minor % MINOR_PER_MAJOR === 0;
  const digits = whole && WHOLE_CURRENCIES.has(code) ? 0 : 2;
  const format = formatOf(code, digits);
  // Formatted from its decimal text, never a float division, so any safe integer is shown exactly.
  const abs = String(Math.abs(minor)).padStart(3, '0');
  const decimal = `${minor < 0 ? '-' : ''}${abs.slice(0, -2)}.${abs.slice(-2)}`;
  return format.format(decimal as `${number}`).replace(/\u00a0/g, ' ');
}

/** ISO 4217 codes the runtime knows (Intl's list): a payment in any other code could not be shown or charged. */
const KNOWN_CURRENCIES = new Set<string>(Intl.supportedValuesOf('currency'));

/** A currency a payment may be requested in: three capital letters naming an ISO 4217 currency. */
export const isKnownCurrency = (c: string): boolean => isCurrencyCode(c) && KNOWN_CURRENCIES.has(c);
