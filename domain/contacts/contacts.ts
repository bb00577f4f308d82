// Contact create/update rules from the contract, shared by the REST routes and the bulk import so a
// row in a CSV file and a JSON request are judged by exactly the same code. No I/O.

export const LIMITS = { phone: 64, countryCode: 8, name: 160 } as const;

/** Top-level fields that are never stored as custom fields. */
export const RESERVED_FIELDS: readonly string[] = [
  'PHONE',
  'phone_number',
  'country_code',
  'name',
  'NAME',
  'FIRST_NAME',
  'LAST_NAME',
  'is_subscribed',
  '_token',
];
const RESERVED = new Set(RESERVED_FIELDS);

export interface ContactFields {
  name: string;
  countryCode: string;
  phoneNumber: string;
  fullPhoneNumber: string;
  /** undefined: not sent (create defaults to true, update keeps the stored value). */
  isSubscribed: boolean | undefined;
  customFieldValues: Record<string, unknown>;
}

export type FieldErrors = Record<string, string[]>;
export type ParseResult = { ok: true; contact: ContactFields } | { ok: false; errors: FieldErrors };

/**
 * Non-digits removed; a matching supplied country code removed from the front; then, when a country
 * code is present, one national trunk zero removed. A leading plus never implies a country code.
 */
export function normalizePhone(rawPhone: string, countryCode: string): { phoneNumber: string; fullPhoneNumber: string } {
  let digits = rawPhone.replace(/\D/g, '');
  if (countryCode !== '') {
    if (digits.startsWith(countryCode)) digits = digits.slice(countryCode.length);
    if (digits.startsWith('0')) digits = digits.slice(1);
  }
  return { phoneNumber: digits, fullPhoneNumber: countryCode + digits };
}

/** name, then NAME (each at most 160); else FIRST_NAME and LAST_NAME joined; else the normalized phone. */
export function deriveName(body: Record<string, unknown>, normalizedPhone: string): string {
  for (const key of ['name', 'NAME']) {
    const v = text(body[key]);
    if (v !== '') return v;
  }
  const joined = [text(body.FIRST_NAME), text(body.LAST_NAME)].filter((s) => s !== '').join(' ');
  // The parts have no limit of their own; the stored name keeps the contract's 160.
  if (joined !== '') return [...joined].slice(0, LIMITS.name).join('');
  return normalizedPhone;
}

/** Every non-reserved top-level field, as sent (a `custom_field_values` object is itself one key). */
export function extractCustomFields(body: Record<string, unknown>): Record<string, unknown> {
  // Keys are the caller's: one named __proto__ is a custom field like any other, not a prototype
  // (fromEntries defines own keys; assignment would call the __proto__ setter).
  const out = Object.fromEntries(Object.entries(body).filter(([k]) => !RESERVED.has(k)));
  return out;
}

/** PHONE wins over its alias phone_number; an empty value counts as not sent. */
export function pickPhone(body: Record<string, unknown>): { field: 'PHONE' | 'phone_number'; value: string } | null {
  for (const field of ['PHONE', 'phone_number'] as const) {
    const v = text(body[field]);
    if (v !== '') return { field, value: v };
  }
  return null;
}

const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);

/** Booleans, 0/1 and their text forms (CSV cells are text); empty means not sent. */
export function parseSubscribed(v: unknown): boolean | undefined | 'invalid' {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'number' && typeof v !== 'string') return 'invalid';
  const s = String(v).trim().toLowerCase();
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  return s === '' ? undefined : 'invalid';
}

/** Validates a create or update payload and derives the stored fields. */
export function parseContact(body: Record<string, unknown>): ParseResult {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => {
    (errors[field] ??= []).push(message);
  };
  const label = (field: string) => field.replace(/_/g, ' ');
  const checkText = (field: string, max: number) => {
    const v = body[field];
    if (v === undefined || v === null) return;
    if (typeof v !== 'string' && typeof v !== 'number') add(field, `The ${label(field)} must be a string.`);
    else if ([...String(v)].length > max) add(field, `The ${label(field)} may not be greater than ${max} characters.`);
  };
  checkText('PHONE', LIMITS.phone);
  checkText('phone_number', LIMITS.phone);
  checkText('country_code', LIMITS.countryCode);
  checkText('name', LIMITS.name);
  checkText('NAME', LIMITS.name);
  for (const f of ['FIRST_NAME', 'LAST_NAME']) {
    const v = body[f];
    if (v !== undefined && v !== null && typeof v !== 'string' && typeof v !== 'number') add(f, `The ${label(f)} must be a string.`);
  }
  const phone = pickPhone(body);
  if (!phone && !errors.PHONE && !errors.phone_number) add('PHONE', 'The PHONE field is required.');
  const rawCode = text(body.country_code);
  const countryCode = rawCode.replace(/\D/g, '');
  if (rawCode !== '' && countryCode === '' && !errors.country_code)
    add('country_code', 'The country code must be a calling code such as 255.');
  const subscribed = parseSubscribed(body.is_subscribed);
  if (subscribed === 'invalid') add('is_subscribed', 'The is subscribed field must be true or false.');
  if (Object.keys(errors).length > 0 || !phone || subscribed === 'invalid') return { ok: false, errors };

  const { phoneNumber, fullPhoneNumber } = normalizePhone(phone.value, countryCode);
  return {
    ok: true,
    contact: {
      name: deriveName(body, phoneNumber),
      countryCode,
      phoneNumber,
      fullPhoneNumber,
      isSubscribed: subscribed,
      customFieldValues: extractCustomFields(body),
    },
  };
}

function text(v: unknown): string {
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return '';
}
