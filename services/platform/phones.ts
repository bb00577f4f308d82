import { parsePhoneNumberWithError, type CountryCode } from 'libphonenumber-js/max';

// Message recipients (and invitees, chat customers) to E.164, what the providers take. The accepted
// forms, as a Twilio user writes them (docs/decisions.md, "Recipients in E.164"):
//   +<country code><number>         E.164, with any spaces, dashes, dots or parentheses
//   <country code><number>          the same without the plus ("phone with country code first")
//   0<national number>              a national number: only with a known region, since the same
//                                   digits are a different subscriber in every country
// The account and its channels carry no country today, so the send paths pass no region and a
// national number becomes a failed record naming why (the contract's rule 3), never `+0712…`.
//
// Outside the national form, whether the subscriber number is valid in its country's numbering plan
// is left to the provider, whose refusal is stored on the record as before: only what can never
// reach a handset is refused here (no such country calling code, fewer than 6 or more than 15 digits).

export type RecipientNumber = { e164: string } | { problem: string };

export const NOT_A_PHONE_NUMBER = 'The recipient is not a valid phone number.';
export const NATIONAL_WITHOUT_REGION =
  'The recipient is a national number (it starts with 0) and no country is known for it: write it in international format, +<country code><number>.';

const FORMATTING = /[\s\-.()]/g;

/**
 * The country calling code a run of digits starts with, or null. Calling codes are a prefix code of
 * one to three digits, so the first three digits decide it: one parse per distinct prefix, memoised
 * (a campaign page checks thousands of numbers of a handful of countries).
 */
const callingCodes = new Map<string, string | null>();
function callingCodeOf(digits: string): string | null {
  const prefix = digits.slice(0, 3);
  let code = callingCodes.get(prefix);
  if (code === undefined) {
    try {
      // Padded to a plausible length so the parse judges the calling code, not the length.
      code = parsePhoneNumberWithError(`+${prefix.padEnd(12, '0')}`).countryCallingCode;
    } catch {
      code = null;
    }
    callingCodes.set(prefix, code);
  }
  return code;
}

export function parseRecipient(raw: string, region?: CountryCode): RecipientNumber {
  const compact = raw.trim().replace(FORMATTING, '');
  if (/^0\d+$/.test(compact)) {
    if (!region) return { problem: NATIONAL_WITHOUT_REGION };
    try {
      const p = parsePhoneNumberWithError(compact, region);
      // Built by us from a guess of the country, so held to that country's lengths.
      return p.isPossible() ? { e164: p.number } : { problem: NOT_A_PHONE_NUMBER };
    } catch {
      return { problem: NOT_A_PHONE_NUMBER };
    }
  }
  const digits = /^\+?[1-9]\d*$/.test(compact) ? compact.replace(/^\+/, '') : null;
  if (!digits || digits.length < 6 || digits.length > 15 || !callingCodeOf(digits)) return { problem: NOT_A_PHONE_NUMBER };
  return { e164: `+${digits}` };
}

/** The number in E.164, or null when it cannot be one (parseRecipient says why). */
export function toE164(raw: string, region?: CountryCode): string | null {
  const r = parseRecipient(raw, region);
  return 'e164' in r ? r.e164 : null;
}
