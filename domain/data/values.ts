import { DATA_LIMITS, type FieldType } from './vocabulary.js';
import type { ColumnDef, StatusField } from './definitions.js';
import { mayMove, type DataCaller } from './access.js';
import { readDateTime } from '../platform/date-time.js';

// Field value rules for writes (Resources > Data table, "Field value rules for writes"): what a
// client may send for each column type and the stored (normalized) value it becomes. Pure: phone
// numbering plans come from a package, so the service hands the phone rule in (`ValueEnv.phone`).
//
// Choices where the contract is silent (docs/data-tables.md, "Field values"):
// - Blank text ('' or only whitespace), an empty multi_select list and an empty file list are no
//   value: they clear like null (so a required column cannot be satisfied by '').
// - Text is kept as sent (not trimmed); its length is counted in characters (code points).
// - multi_select keys are stored in the options' order, so equal sets are equal values (unique guards).
// - Email: ASCII local part and domain, one '@', dot-separated domain labels with a TLD of two or
//   more letters (or an xn-- label), at most 254 characters; the domain is lowercased, the local
//   part kept as sent (it is case-sensitive in principle). Deliverability is never checked.
// - Currency: a plain amount (never minor units), rounded to config.precision (default 0);
//   config.min/max apply as for numbers. The currency code is the column's, never stored per value.
// - A file descriptor is {name, url?, size?, mime?} and nothing else; url must be http(s).

export type FieldErrors = Record<string, string[]>;

/** E.164 for a phone written in (or relative to) `region`, or null when it is not a valid number. */
export type PhoneRule = (raw: string, region: string) => string | null;
export interface ValueEnv {
  phone: PhoneRule;
}

export type Coerced = { ok: true; value: unknown } | { ok: false; error: string };
const ok = (value: unknown): Coerced => ({ ok: true, value });
const bad = (error: string): Coerced => ({ ok: false, error });

export const DEFAULT_PHONE_REGION = 'TZ';
export const DEFAULT_CURRENCY = 'TZS';
/** What a client sent for an auto_number column (and gets back as the error). */
export const AUTO_NUMBER_REFUSAL = 'This value is written by the service and may not be sent.';
const UNKNOWN_REFUSAL = 'This column holds values of a type this API cannot write.';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMERIC = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const EMAIL_LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const EMAIL_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const EMAIL_TLD = /^(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;
const FILE_KEYS = new Set(['name', 'url', 'size', 'mime']);
const FILE_LIST_MAX = 20;

const isBlank = (v: unknown) =>
  v === null || v === undefined || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.length === 0);

/** Half away from zero, at `precision` decimals; the decimal text is taken first so 1.005 → 1.01. */
export function roundHalfAwayFromZero(x: number, precision: number): number {
  const p = Math.max(0, Math.min(12, Math.trunc(precision)));
  const f = 10 ** p;
  const scaled = Number((Math.abs(x) * f).toPrecision(15));
  return (Math.sign(x) * Math.round(scaled)) / f || 0;
}

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const daysIn = (y: number, m: number) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
const validDate = (y: number, m: number, d: number) => y >= 1 && m >= 1 && m <= 12 && d >= 1 && d <= daysIn(y, m);

/** 'YYYY-MM-DD', a real calendar day (years 0001–9999). */
export function parseDate(s: string): string | null {
  const m = DATE.exec(s);
  if (!m || !validDate(+m[1], +m[2], +m[3])) return null;
  return s;
}

/**
 * ISO 8601 with an explicit offset (Z or ±hh:mm) → fixed-width UTC 'YYYY-MM-DDTHH:mm:ss.sssZ'
 * (so text order is time order); a value without an offset is ambiguous and refused. Read by the
 * rule every date-time of a request follows (domain/platform/date-time.ts: offsets up to ±15:59,
 * digits past milliseconds cut); the stored form also needs a UTC year of 0001-9999.
 */
export function parseDatetime(s: string): string | null {
  const t = readDateTime(s, 'iso8601');
  if (!t) return null;
  const year = t.getUTCFullYear();
  if (year < 1 || year > 9999) return null;
  return t.toISOString();
}

/** A sane address (see the header): the address with its domain lowercased, or null. */
export function parseEmail(raw: string): string | null {
  const s = raw.trim();
  if (s.length > 254) return null;
  const at = s.lastIndexOf('@');
  if (at < 1 || at !== s.indexOf('@')) return null;
  const local = s.slice(0, at);
  const domain = s.slice(at + 1).toLowerCase();
  if (local.length > 64 || !EMAIL_LOCAL.test(local)) return null;
  const labels = domain.split('.');
  if (labels.length < 2 || !labels.every((l) => EMAIL_LABEL.test(l)) || !EMAIL_TLD.test(labels[labels.length - 1])) return null;
  return `${local}@${domain}`;
}

function textRule(col: ColumnDef, v: unknown): Coerced {
  if (typeof v !== 'string') return bad('This value must be text.');
  if (v.includes('\0')) return bad('This value may not contain a NUL character.');
  const max = col.config.max_length ?? (col.type === 'long_text' ? DATA_LIMITS.longTextMax : DATA_LIMITS.textMax);
  // Code points, not UTF-16 units: an emoji is one character to the person typing it.
  let n = 0;
  for (const _ of v) if (++n > max) return bad(`This value may not be longer than ${max} characters.`);
  return ok(v);
}

function numberRule(col: ColumnDef, v: unknown, currency: boolean): Coerced {
  let x: number;
  if (typeof v === 'number') x = v;
  else if (typeof v === 'string' && NUMERIC.test(v.trim())) x = Number(v.trim());
  else return bad(currency ? 'This value must be a plain amount (a number).' : 'This value must be a number.');
  if (!Number.isFinite(x)) return bad('This value must be a finite number.');
  const precision = col.config.precision ?? (currency ? 0 : undefined);
  if (precision !== undefined) x = roundHalfAwayFromZero(x, precision);
  x = x || 0; // -0 is stored as 0
  const { min, max } = col.config;
  if (typeof min === 'number' && x < min) return bad(`This value must be at least ${min}.`);
  if (typeof max === 'number' && x > max) return bad(`This value may not be greater than ${max}.`);
  return ok(x);
}

function optionKeys(col: ColumnDef): string[] {
  return (col.config.options ?? []).map((o) => o.key);
}

function selectRule(col: ColumnDef, v: unknown): Coerced {
  if (typeof v !== 'string') return bad('This value must be one option key.');
  if (!optionKeys(col).includes(v)) return bad(`The selected option ${JSON.stringify(v)} is not one of this column's options.`);
  return ok(v);
}

function multiSelectRule(col: ColumnDef, v: unknown): Coerced {
  if (!Array.isArray(v)) return bad('This value must be a list of option keys.');
  const keys = optionKeys(col);
  const seen = new Set<string>();
  for (const k of v) {
    if (typeof k !== 'string') return bad('Each item must be an option key.');
    if (!keys.includes(k)) return bad(`The selected option ${JSON.stringify(k)} is not one of this column's options.`);
    if (seen.has(k)) return bad(`The option ${JSON.stringify(k)} is listed twice.`);
    seen.add(k);
  }
  return ok(keys.filter((k) => seen.has(k)));
}

function relationRule(col: ColumnDef, v: unknown): Coerced {
  if (!col.config.table_id) return bad('This column names no related table.');
  const id = typeof v === 'string' ? v : v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as { id?: unknown }).id : undefined;
  if (typeof id !== 'string' || !UUID.test(id)) return bad('This value must be a record id (a UUID) or an object holding one as id.');
  return ok(id.toLowerCase());
}

function descriptor(v: unknown): { value?: Record<string, unknown>; error?: string } {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { error: 'A file must be a descriptor {name, url?, size?, mime?}.' };
  const d = v as Record<string, unknown>;
  const extra = Object.keys(d).find((k) => !FILE_KEYS.has(k));
  if (extra !== undefined) return { error: `A file descriptor holds name, url, size and mime only (not ${JSON.stringify(extra)}).` };
  if (typeof d.name !== 'string' || !d.name.trim() || d.name.length > 255) return { error: 'A file needs a name of 1 to 255 characters.' };
  const out: Record<string, unknown> = { name: d.name };
  if (d.url !== undefined && d.url !== null) {
    if (typeof d.url !== 'string' || d.url.length > 2048 || !/^https?:\/\/[^\s]+$/i.test(d.url))
      return { error: 'A file url must be an http(s) address of at most 2048 characters.' };
    out.url = d.url;
  }
  if (d.size !== undefined && d.size !== null) {
    if (typeof d.size !== 'number' || !Number.isSafeInteger(d.size) || d.size < 0)
      return { error: 'A file size must be a whole number of bytes.' };
    out.size = d.size;
  }
  if (d.mime !== undefined && d.mime !== null) {
    if (typeof d.mime !== 'string' || !/^[\w.+-]+\/[\w.+-]+$/.test(d.mime) || d.mime.length > 255)
      return { error: 'A file mime must be a media type such as image/png.' };
    out.mime = d.mime.toLowerCase();
  }
  return { value: out };
}

function fileRule(col: ColumnDef, v: unknown): Coerced {
  if (!col.config.multiple) {
    if (Array.isArray(v)) return bad('This column holds one file: send a descriptor, not a list.');
    const d = descriptor(v);
    return d.error ? bad(d.error) : ok(d.value);
  }
  const list = Array.isArray(v) ? v : [v];
  if (list.length > FILE_LIST_MAX) return bad(`At most ${FILE_LIST_MAX} files.`);
  const out: Record<string, unknown>[] = [];
  for (const item of list) {
    const d = descriptor(item);
    if (d.error) return bad(d.error);
    out.push(d.value!);
  }
  return ok(out);
}

/**
 * One non-empty value sent for a column → its stored value, or why it is refused. Empty values
 * (null, blank text, empty lists) never reach this: the caller treats them as clearing.
 */
export function coerceValue(col: ColumnDef, v: unknown, env: ValueEnv): Coerced {
  const type: FieldType = col.type;
  switch (type) {
    case 'text':
    case 'long_text':
      return textRule(col, v);
    case 'number':
      return numberRule(col, v, false);
    case 'currency':
      return numberRule(col, v, true);
    case 'boolean':
      return typeof v === 'boolean' ? ok(v) : bad('This value must be true or false.');
    case 'date': {
      const s = typeof v === 'string' ? parseDate(v) : null;
      return s ? ok(s) : bad('This value must be a date written YYYY-MM-DD.');
    }
    case 'datetime': {
      const s = typeof v === 'string' ? parseDatetime(v) : null;
      return s ? ok(s) : bad('This value must be an ISO 8601 date and time with a timezone (Z or ±hh:mm).');
    }
    case 'phone': {
      if (typeof v !== 'string') return bad('This value must be a phone number (text).');
      const e164 = v.length <= 64 ? env.phone(v, col.config.region || DEFAULT_PHONE_REGION) : null;
      return e164 ? ok(e164) : bad('This value is not a valid phone number.');
    }
    case 'email': {
      const s = typeof v === 'string' ? parseEmail(v) : null;
      return s ? ok(s) : bad('This value must be a valid email address.');
    }
    case 'select':
      return selectRule(col, v);
    case 'multi_select':
      return multiSelectRule(col, v);
    case 'relation':
      return relationRule(col, v);
    case 'file':
      return fileRule(col, v);
    case 'auto_number':
      return bad(AUTO_NUMBER_REFUSAL);
    case 'unknown':
      return bad(UNKNOWN_REFUSAL);
  }
}

export interface CheckedWrite {
  /** The record's stored data after the write (create: defaults filled; update: merged), keys in column order. */
  data: Record<string, unknown>;
  /** Keys whose stored value this write changes. */
  changed: string[];
  errors: FieldErrors;
}

const sameValue = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

function addError(errors: Map<string, string[]>, key: string, message: string) {
  const list = errors.get(key) ?? [];
  if (!list.includes(message)) list.push(message);
  errors.set(key, list);
}

/**
 * A create (`current` null) or a PATCH (`current` the stored data) checked against the columns:
 * unknown keys, auto_number and unknown-type keys, every value's rule, required values (omitted on
 * create without a default, or cleared), status fields that must start in an initial state.
 * Collects every problem (by key) rather than stopping at the first. auto_number values are not
 * filled here: the service issues them inside its transaction.
 */
export function checkWrite(
  columns: readonly ColumnDef[],
  input: Record<string, unknown>,
  current: Record<string, unknown> | null,
  env: ValueEnv,
  statusFields: readonly StatusField[] = [],
): CheckedWrite {
  // Keys come from a request: a Map, so a key such as __proto__ is just a key.
  const errors = new Map<string, string[]>();
  const byKey = new Map(columns.map((c) => [c.key, c]));
  const next = new Map<string, unknown>(current ? Object.entries(current).filter(([k]) => byKey.has(k)) : []);
  const sent = new Set<string>();

  for (const [key, raw] of Object.entries(input)) {
    const col = byKey.get(key);
    if (!col) {
      addError(errors, key, 'This key is not a column of this table.');
      continue;
    }
    sent.add(key);
    if (col.type === 'auto_number') {
      addError(errors, key, AUTO_NUMBER_REFUSAL);
      continue;
    }
    if (col.type === 'unknown') {
      addError(errors, key, UNKNOWN_REFUSAL);
      continue;
    }
    if (isBlank(raw)) {
      next.delete(key);
      continue;
    }
    const r = coerceValue(col, raw, env);
    if (r.ok) next.set(key, r.value);
    else addError(errors, key, r.error);
  }

  if (!current) {
    for (const col of columns) {
      if (sent.has(col.key) || col.config.default === undefined || col.config.default === null) continue;
      if (col.type === 'auto_number' || col.type === 'unknown') continue;
      const r = coerceValue(col, col.config.default, env);
      if (r.ok) next.set(col.key, r.value);
      else addError(errors, col.key, `The column's default value is not valid: ${r.error}`);
    }
  }

  const status = new Map(statusFields.map((s) => [s.column, s]));
  for (const col of columns) {
    if (errors.has(col.key) || col.type === 'auto_number') continue;
    const field = status.get(col.key);
    const required = col.required || Boolean(field?.required);
    const has = next.has(col.key);
    // A required value is checked when a create omits it and when a PATCH sends it empty; a PATCH
    // that does not name the key leaves the stored value alone (even one stored before it became required).
    if (required && !has && (!current || sent.has(col.key))) addError(errors, col.key, 'This field is required.');
    if (!current && field && has && field.initial.length && !field.initial.includes(String(next.get(col.key))))
      addError(errors, col.key, `A new record must start in one of: ${field.initial.join(', ')}.`);
  }

  const data: Record<string, unknown> = {};
  for (const col of columns) if (next.has(col.key)) data[col.key] = next.get(col.key);
  const changed = columns
    .map((c) => c.key)
    .filter((k) => (current ? !sameValue(current[k], data[k]) : data[k] !== undefined) && !errors.has(k));
  return { data, changed, errors: Object.fromEntries(errors) };
}

/** A status field's move as a PATCH asks for it. */
export interface StatusMoveCheck {
  column: string;
  from: string | null;
  to: string | null;
  /** 'illegal': not a listed move in a strict machine (409); 'forbidden': listed, but no matching move's permission is held (403). */
  refusal?: 'illegal' | 'forbidden';
}

/**
 * The status moves a PATCH makes, each judged (Data record status fields). A move is listed when a
 * move goes from the current state (or '*') to the new one; the caller needs one such move it is
 * allowed to make. A machine that is not strict lets unlisted moves through. Clearing a status
 * value is a move to no state: never listed, so refused by a strict machine. A record with no
 * state may enter at an initial one (as a create may) without a listed move.
 */
export function checkStatusMoves(
  statusFields: readonly StatusField[],
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  caller: DataCaller,
): StatusMoveCheck[] {
  const out: StatusMoveCheck[] = [];
  for (const f of statusFields) {
    const from = (before[f.column] as string | undefined) ?? null;
    const to = (after[f.column] as string | undefined) ?? null;
    if (from === to) continue;
    // A record with no state yet (an optional field, or one added after the record) may enter at an initial state, as a create may.
    if (from === null && to !== null && (!f.initial.length || f.initial.includes(to))) {
      out.push({ column: f.column, from, to });
      continue;
    }
    const listed = to === null ? [] : f.moves.filter((m) => m.to === to && (m.from === '*' || m.from === from));
    let refusal: StatusMoveCheck['refusal'];
    if (!listed.length) refusal = f.strict ? 'illegal' : undefined;
    else if (!listed.some((m) => mayMove(m, caller))) refusal = 'forbidden';
    out.push({ column: f.column, from, to, ...(refusal ? { refusal } : {}) });
  }
  return out;
}

/** The serialized size a record's data counts against the 8,192-byte limit and the storage quota. */
export const dataBytes = (data: Record<string, unknown>) => new TextEncoder().encode(JSON.stringify(data)).length;
