import { parsePhoneNumberWithError, isSupportedCountry, type CountryCode } from 'libphonenumber-js/max';

// A lead's phone number "in any common form" (docs/leads.md, "Finding the person") to the E.164 it is
// matched by. Accepted, for a Tanzanian account (country TZ):
//   +255 754 123 456, +255-754-123-456, +255 (0)754 123456, (+255) 754123456   international, any formatting
//   255754123456                                                              the country code without the plus
//   00255754123456                                                            the international prefix 00
//   0754 123 456, 0754-123-456, 754123456                                     national, read in the account's country
//   tel:+255754123456, wa:255754123456                                        as links and chat ids write them
// A national number needs a country: the request's `country`, else the account's. Held to the
// numbering plan's lengths (libphonenumber's full metadata), so 12345 or +255 12 is refused, not
// stored as someone.

export type LeadPhone = { e164: string } | { problem: string };

const SCHEME = /^(?:tel|wa|whatsapp|sms):/i;
const FORMATTING = /[\s\-.()/]/g;

export const NATIONAL_WITHOUT_COUNTRY =
  'This is a national number and no country is known to read it in: write it as +<country code><number>, send country, or have the account’s country set.';
export const NOT_A_PHONE = 'Not a phone number in any form we can read.';

const possible = (raw: string, region?: CountryCode): string | null => {
  try {
    const p = parsePhoneNumberWithError(raw, region);
    return p.isPossible() ? p.number : null;
  } catch {
    return null;
  }
};

const compacted = (raw: string) =>
  // "+255 (0)754…": the trunk zero some write after the country code is not dialled from abroad.
  // 00 + country code is the international prefix of most countries, and libphonenumber reads it only
  // as the default region's own prefix (TZ's is 000/005/006: 00255… would become +2550255…).
  raw
    .trim()
    .replace(SCHEME, '')
    .replace(/\(0\)/g, '')
    .replace(FORMATTING, '')
    .replace(/^00(?=[1-9])/, '+');

/** Whether the number is written with its country code (+ or 00), so no country is needed to read it. */
export const isInternational = (raw: string) => compacted(raw).startsWith('+');

export function leadPhone(raw: string, country?: string | null): LeadPhone {
  const region = country && isSupportedCountry(country.toUpperCase()) ? (country.toUpperCase() as CountryCode) : undefined;
  const s = compacted(raw);
  if (!/^\+?\d{4,17}$/.test(s)) return { problem: NOT_A_PHONE };
  if (s.startsWith('+')) {
    const n = possible(s);
    return n ? { e164: n } : { problem: NOT_A_PHONE };
  }
  if (region) {
    // National (with or without its trunk 0), or the country code written without the plus.
    const national = possible(s, region);
    if (national) return { e164: national };
    if (!s.startsWith('0')) {
      const international = possible(`+${s}`);
      if (international) return { e164: international };
    }
    return { problem: NOT_A_PHONE };
  }
  if (s.startsWith('0')) return { problem: NATIONAL_WITHOUT_COUNTRY };
  const international = possible(`+${s}`);
  return international ? { e164: international } : { problem: NOT_A_PHONE };
}
