// Chat-channel message templates (docs/templates.md): the words and pure rules of the family. A
// template is one name in one language on one WhatsApp Business Account (WABA), in the Cloud API's
// message_templates shape; these rules refuse, before the provider sees it, what the provider would
// refuse for its form (body missing, too many buttons, examples that do not match the placeholders).

export const TEMPLATE_CATEGORIES = ['MARKETING', 'UTILITY', 'AUTHENTICATION'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

/**
 * Our statuses. `submitting`: saved, the provider not yet answered; `pending`: in review (Meta's
 * PENDING); `in_appeal`; `approved` (APPROVED, REINSTATED, FLAGGED: still sendable); `rejected`;
 * `paused` (a quality pause); `disabled`; `archived`; `deleted`. Meta's own word stays beside it
 * (provider_status), so nothing of its larger set is lost.
 */
export const TEMPLATE_STATUSES = [
  'submitting',
  'pending',
  'in_appeal',
  'approved',
  'rejected',
  'paused',
  'disabled',
  'archived',
  'deleted',
] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

/** Where a template came from: created here, imported by sync, or deployed from another WABA. */
export const TEMPLATE_SOURCES = ['created', 'synced', 'deployed'] as const;
export type TemplateSource = (typeof TEMPLATE_SOURCES)[number];

/** Statuses the review is still open in: the review workflow keeps asking while one holds. */
export const IN_REVIEW: readonly TemplateStatus[] = ['submitting', 'pending', 'in_appeal'];
export const isInReview = (s: TemplateStatus) => IN_REVIEW.includes(s);

/** Meta's status (or status-update event) in our words; null: a word that changes nothing (LOCKED, a quality flag kept as approved…). */
export function templateStatusOf(provider: string): TemplateStatus | null {
  switch (provider.toUpperCase()) {
    case 'PENDING':
      return 'pending';
    case 'IN_APPEAL':
      return 'in_appeal';
    case 'APPROVED':
    case 'REINSTATED':
    case 'FLAGGED':
    case 'UNPAUSE':
      return 'approved';
    case 'REJECTED':
    case 'LIMIT_EXCEEDED':
      return 'rejected';
    case 'PAUSED':
      return 'paused';
    case 'DISABLED':
      return 'disabled';
    case 'ARCHIVED':
      return 'archived';
    case 'PENDING_DELETION':
    case 'DELETED':
      return 'deleted';
    default:
      return null;
  }
}

export const TEMPLATE_LIMITS = {
  /** The contract's chat template name limit (Meta allows 512). */
  name: 191,
  language: 20,
  body: 1024,
  header: 60,
  footer: 60,
  buttons: 10,
  buttonText: 25,
  url: 2000,
  copyCode: 15,
} as const;

/** Lower-case letters, digits and underscores, as Meta requires. */
export const TEMPLATE_NAME_PATTERN = '^[a-z0-9_]+$';
/** Meta's locale codes: `en`, `sw`, `en_US`, `pt_BR`, `zh_HK`, `fil`. */
export const TEMPLATE_LANGUAGE_PATTERN = '^[a-z]{2,3}(_[A-Z]{2,3})?$';

const BUTTON_CAPS: Record<string, number> = { QUICK_REPLY: 10, URL: 2, PHONE_NUMBER: 1, COPY_CODE: 1, OTP: 1, FLOW: 1, VOICE_CALL: 1 };
const HEADER_FORMATS = ['TEXT', 'IMAGE', 'VIDEO', 'DOCUMENT', 'LOCATION'];

export type TemplateFieldErrors = Record<string, string[]>;

/** What a template expects of a send: the parameters its header and body take. */
export interface TemplateShape {
  headerParams: number;
  bodyParams: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const chars = (s: string) => [...s].length;

/** The placeholders of a text, in order of appearance: {{1}} → '1', {{name}} → 'name'. */
export function placeholdersOf(text: string): string[] {
  return [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]);
}

/**
 * Positional placeholders ({{1}}…{{n}}) numbered from 1 without a gap (a repeat is allowed); the
 * count of distinct ones, or the problem.
 */
function positional(text: string): { count: number } | { problem: string } {
  const names = placeholdersOf(text);
  if (names.some((n) => !/^[1-9][0-9]*$/.test(n)))
    return { problem: 'Placeholders must be positional, {{1}}, {{2}}, …; named parameters are not supported.' };
  const distinct = [...new Set(names.map(Number))].sort((a, b) => a - b);
  if (distinct.some((n, i) => n !== i + 1)) return { problem: 'Placeholders must be numbered {{1}}, {{2}}, … without a gap.' };
  return { count: distinct.length };
}

/**
 * Checks a template's components as the Cloud API's message_templates takes them and answers the
 * field problems (keyed like `components.1.example.body_text`) and, when none, the parameters a send
 * of it must carry.
 */
export function checkTemplateComponents(
  category: TemplateCategory,
  components: readonly unknown[],
): { errors: TemplateFieldErrors; shape: TemplateShape | null } {
  const errors: TemplateFieldErrors = {};
  const add = (k: string, m: string) => (errors[k] ??= []).push(m);
  const seen: Record<string, number> = {};
  const shape: TemplateShape = { headerParams: 0, bodyParams: 0 };

  components.forEach((c, i) => {
    const at = `components.${i}`;
    if (!isObj(c)) return add(at, 'Each component must be an object.');
    const type = typeof c.type === 'string' ? c.type.toUpperCase() : '';
    if (!['HEADER', 'BODY', 'FOOTER', 'BUTTONS'].includes(type))
      return add(`${at}.type`, 'The component type must be HEADER, BODY, FOOTER or BUTTONS.');
    if ((seen[type] = (seen[type] ?? 0) + 1) > 1) return add(`${at}.type`, `A template has at most one ${type} component.`);
    const example = isObj(c.example) ? c.example : undefined;
    const text = typeof c.text === 'string' ? c.text : undefined;

    if (type === 'BODY') {
      if (text === undefined || text.trim() === '') {
        // Authentication templates carry Meta's fixed text instead of their own.
        if (category !== 'AUTHENTICATION') add(`${at}.text`, 'The body text is required.');
        return;
      }
      if (chars(text) > TEMPLATE_LIMITS.body) add(`${at}.text`, `The body text may not be longer than ${TEMPLATE_LIMITS.body} characters.`);
      const p = positional(text);
      if ('problem' in p) return add(`${at}.text`, p.problem);
      const trimmed = text.trim();
      if (p.count > 0 && (/^\{\{[^{}]*\}\}/.test(trimmed) || /\{\{[^{}]*\}\}$/.test(trimmed)))
        add(`${at}.text`, 'The body text may not start or end with a placeholder.');
      shape.bodyParams = p.count;
      checkExample(add, `${at}.example.body_text`, p.count, example?.body_text, true);
      return;
    }
    if (type === 'HEADER') {
      const format = typeof c.format === 'string' ? c.format.toUpperCase() : '';
      if (!HEADER_FORMATS.includes(format)) return add(`${at}.format`, `The header format must be one of ${HEADER_FORMATS.join(', ')}.`);
      if (format === 'TEXT') {
        if (text === undefined || text.trim() === '') return add(`${at}.text`, 'A TEXT header needs its text.');
        if (chars(text) > TEMPLATE_LIMITS.header)
          add(`${at}.text`, `The header text may not be longer than ${TEMPLATE_LIMITS.header} characters.`);
        const p = positional(text);
        if ('problem' in p) return add(`${at}.text`, p.problem);
        if (p.count > 1) return add(`${at}.text`, 'A header takes at most one placeholder, {{1}}.');
        shape.headerParams = p.count;
        checkExample(add, `${at}.example.header_text`, p.count, example?.header_text, false);
        return;
      }
      if (text !== undefined) add(`${at}.text`, `A ${format} header has no text.`);
      if (format === 'LOCATION') {
        shape.headerParams = 1;
        return;
      }
      // A media header is sent with its media as the one header parameter; Meta reviews it from a sample handle.
      shape.headerParams = 1;
      const h = example?.header_handle;
      if (!Array.isArray(h) || h.length !== 1 || typeof h[0] !== 'string' || h[0] === '')
        add(`${at}.example.header_handle`, `A ${format} header needs one sample media handle in example.header_handle.`);
      return;
    }
    if (type === 'FOOTER') {
      if (text === undefined || text.trim() === '') return add(`${at}.text`, 'The footer text is required.');
      if (chars(text) > TEMPLATE_LIMITS.footer)
        add(`${at}.text`, `The footer text may not be longer than ${TEMPLATE_LIMITS.footer} characters.`);
      if (placeholdersOf(text).length) add(`${at}.text`, 'A footer takes no placeholders.');
      return;
    }
    checkButtons(add, at, category, c.buttons);
  });
  if (!seen.BODY) add('components', 'A template needs exactly one BODY component.');
  return { errors, shape: Object.keys(errors).length ? null : shape };
}

/** An example of `count` values: body_text is one row ([[…]]), header_text a flat list. */
function checkExample(add: (k: string, m: string) => void, at: string, count: number, value: unknown, nested: boolean): void {
  if (count === 0) {
    if (value !== undefined) add(at, 'There is no placeholder for this example to fill.');
    return;
  }
  const row = nested ? (Array.isArray(value) && value.length === 1 ? value[0] : undefined) : value;
  const shown = nested ? '[["…", …]]' : '["…"]';
  if (!Array.isArray(row)) return add(at, `The text has ${count} placeholder(s): give one example value for each, as ${shown}.`);
  if (row.length !== count)
    return add(at, `The text has ${count} placeholder(s) but the example gives ${row.length} value(s); give exactly ${count}.`);
  if (row.some((v) => typeof v !== 'string' || v.trim() === '')) add(at, 'Every example value must be a non-empty string.');
}

function checkButtons(add: (k: string, m: string) => void, at: string, category: TemplateCategory, buttons: unknown): void {
  if (!Array.isArray(buttons) || buttons.length === 0) return add(`${at}.buttons`, 'A BUTTONS component needs at least one button.');
  if (buttons.length > TEMPLATE_LIMITS.buttons)
    return add(`${at}.buttons`, `A template has at most ${TEMPLATE_LIMITS.buttons} buttons; ${buttons.length} were given.`);
  const counts: Record<string, number> = {};
  const kinds: string[] = [];
  buttons.forEach((b, j) => {
    const bat = `${at}.buttons.${j}`;
    if (!isObj(b)) return add(bat, 'Each button must be an object.');
    const type = typeof b.type === 'string' ? b.type.toUpperCase() : '';
    if (!(type in BUTTON_CAPS)) return add(`${bat}.type`, `The button type must be one of ${Object.keys(BUTTON_CAPS).join(', ')}.`);
    if (type === 'OTP' && category !== 'AUTHENTICATION') return add(`${bat}.type`, 'An OTP button belongs to an AUTHENTICATION template.');
    counts[type] = (counts[type] ?? 0) + 1;
    if (counts[type] === BUTTON_CAPS[type] + 1) add(`${at}.buttons`, `A template has at most ${BUTTON_CAPS[type]} ${type} button(s).`);
    kinds.push(type === 'QUICK_REPLY' ? 'quick' : 'other');
    const text = typeof b.text === 'string' ? b.text : undefined;
    if (type !== 'OTP' && type !== 'COPY_CODE' && (text === undefined || text.trim() === ''))
      add(`${bat}.text`, 'The button needs its text.');
    if (text !== undefined && chars(text) > TEMPLATE_LIMITS.buttonText)
      add(`${bat}.text`, `A button text may not be longer than ${TEMPLATE_LIMITS.buttonText} characters.`);
    if (type === 'URL') {
      const url = typeof b.url === 'string' ? b.url : '';
      if (!/^https?:\/\/\S+$/.test(url) || chars(url) > TEMPLATE_LIMITS.url) return add(`${bat}.url`, 'The button needs an http(s) url.');
      const names = placeholdersOf(url);
      if (names.length > 1 || (names.length === 1 && (names[0] !== '1' || !/\{\{\s*1\s*\}\}$/.test(url))))
        return add(`${bat}.url`, 'A URL button takes at most one placeholder, {{1}}, at the end of the url.');
      const ex = b.example;
      if (names.length === 1 && (!Array.isArray(ex) || ex.length !== 1 || typeof ex[0] !== 'string' || !/^https?:\/\//.test(ex[0])))
        add(`${bat}.example`, 'A url with {{1}} needs one example: the whole url with a sample value, as ["https://…"].');
      if (names.length === 0 && ex !== undefined) add(`${bat}.example`, 'There is no placeholder for this example to fill.');
    }
    if (type === 'PHONE_NUMBER' && (typeof b.phone_number !== 'string' || !/^\+?[0-9]{6,20}$/.test(b.phone_number)))
      add(`${bat}.phone_number`, 'The button needs a phone_number in international format.');
    if (type === 'COPY_CODE') {
      const ex = b.example;
      if (typeof ex !== 'string' || ex === '' || chars(ex) > TEMPLATE_LIMITS.copyCode)
        add(`${bat}.example`, `A COPY_CODE button needs a sample code of 1 to ${TEMPLATE_LIMITS.copyCode} characters in example.`);
    }
  });
  // Quick replies and the other buttons are grouped, never interleaved (Meta's rule).
  const switches = kinds.filter((k, i) => i > 0 && k !== kinds[i - 1]).length;
  if (switches > 1) add(`${at}.buttons`, 'Quick-reply buttons and the other buttons must be grouped, not interleaved.');
}

/** The parameters a send gives the header and the body (Cloud API send components, any case). */
export function sendParameterCounts(components: readonly unknown[] | undefined): TemplateShape {
  const counts: TemplateShape = { headerParams: 0, bodyParams: 0 };
  for (const c of components ?? []) {
    if (!isObj(c) || typeof c.type !== 'string') continue;
    const n = Array.isArray(c.parameters) ? c.parameters.length : 0;
    const type = c.type.toLowerCase();
    if (type === 'header') counts.headerParams += n;
    if (type === 'body') counts.bodyParams += n;
  }
  return counts;
}
