// Money of orders (Resources > Order: total_amount is an integer in hundredths; incoming chat
// item_price values are major units). Converted from the decimal text, never through a float
// product, so 19.99 is 1999 and not 1998.9999999999998.

/** ISO 4217 currencies whose minor unit is not the hundredth (the rest have two decimals). */
const EXPONENTS: Record<string, number> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/** The number of decimals the currency's own minor unit has (2 when not listed). */
export const currencyExponent = (currency: string): number => EXPONENTS[currency.toUpperCase()] ?? 2;

/**
 * A price in major units (number or decimal text) as hundredths: first rounded, half away from
 * zero, to the currency's own precision (a JPY 100.4 is 100, so 10000 hundredths), then to the
 * hundredth a three-decimal currency cannot keep (KWD 1.235 is 124). Null when not a finite number.
 */
export function majorToHundredths(amount: number | string, currency: string): number | null {
  const text = typeof amount === 'number' ? (Number.isFinite(amount) ? expand(amount) : '') : amount.trim();
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
  if (!m || (m[2] === '' && !m[3])) return null;
  const sign = m[1] === '-' ? -1 : 1;
  const digits = Math.min(currencyExponent(currency), 2);
  const frac = m[3] ?? '';
  // Whole units and the kept decimals as one integer, rounded half up on the next digit.
  const kept = BigInt((m[2] || '0') + frac.padEnd(digits, '0').slice(0, digits));
  const roundUp = frac.length > digits && frac.charCodeAt(digits) - 48 >= 5;
  const scaled = (kept + (roundUp ? 1n : 0n)) * 10n ** BigInt(2 - digits);
  const n = Number(scaled) * sign;
  return Number.isSafeInteger(n) ? n || 0 : null;
}

/** A number's plain decimal text (no exponent notation: 1e-7 is 0.0000001). */
function expand(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  return n.toFixed(20).replace(/\.?0+$/, '');
}
