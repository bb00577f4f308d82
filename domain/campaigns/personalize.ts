// Campaign personalization: {{name}}, {{phone}}, {{phone_number}}, {{country_code}} and
// {{cf:<custom_key>}}. Unknown variables and missing values become empty text; anything that is not
// a well-formed {{...}} placeholder is left as written. Pure, so workflows and tests can use it.

export interface PersonalizeContact {
  name: string | null;
  countryCode: string | null;
  phoneNumber: string | null;
  /** Digits only (country code + national number), as contacts store it. */
  fullPhoneNumber: string | null;
  customFieldValues: Record<string, unknown> | null;
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

const text = (v: unknown): string => {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
};

/** The value of one variable (without braces), or '' when unknown or missing. */
export function variableValue(variable: string, c: PersonalizeContact): string {
  const v = variable.trim();
  if (/^cf:/i.test(v)) {
    const key = v.slice(3).trim();
    const fields = c.customFieldValues ?? {};
    return Object.prototype.hasOwnProperty.call(fields, key) ? text(fields[key]) : '';
  }
  switch (v.toLowerCase()) {
    case 'name':
      return c.name ?? '';
    // {{phone}}: the full international number with a leading plus; {{phone_number}}: as stored (national part).
    case 'phone':
      return c.fullPhoneNumber ? `+${c.fullPhoneNumber}` : '';
    case 'phone_number':
      return c.phoneNumber ?? '';
    case 'country_code':
      return c.countryCode ?? '';
    default:
      return '';
  }
}

export function personalize(template: string, c: PersonalizeContact): string {
  return template.replace(PLACEHOLDER, (_, variable: string) => variableValue(variable, c));
}

/** True when the template has any placeholder (every recipient then needs its own text). */
export const hasPlaceholders = (template: string) => /\{\{\s*[^{}]*?\s*\}\}/.test(template);
