import { DATA_LIMITS, FIELD_TYPES, type FieldType } from './vocabulary.js';
import type { ColumnConfig, ColumnDef, ColumnUi, SelectOption } from './definitions.js';
import { NAME_MAX, NOT_UNIQUE, KEY, UUID, isInt, labelOf, type AccountFacts, type Problems } from './definition-rules.js';

// One column as an operator defines it: its key, label and type, the flags its type allows, and
// the config each type holds (checked, with its defaults filled in). Pure: the account's tables
// come in as facts.

export interface ColumnInput {
  key: string;
  label?: string;
  type: string;
  stored_type?: string | null;
  required?: boolean;
  unique?: boolean;
  indexed?: boolean;
  config?: Record<string, unknown>;
  ui?: Record<string, unknown>;
  position?: number;
}

export type ColumnDraft = Omit<ColumnDef, 'id' | 'position' | 'index_status' | 'index_error'>;

const OPTION_KEY = /^[a-z0-9_-]{1,64}$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** The settings each type's config may hold (besides `default`, which every type but three takes). */
const CONFIG_KEYS: Record<FieldType, readonly string[]> = {
  text: ['max_length'],
  long_text: ['max_length'],
  number: ['precision', 'min', 'max'],
  currency: ['currency', 'precision', 'min', 'max'],
  boolean: [],
  date: [],
  datetime: [],
  phone: ['region'],
  email: [],
  select: ['options'],
  multi_select: ['options'],
  relation: ['table_id'],
  file: ['multiple'],
  auto_number: [],
  unknown: [],
};
/** auto_number is written by us; files and unknown values come from uploads and imports, never a default. */
const NO_DEFAULT: readonly FieldType[] = ['auto_number', 'file', 'unknown'];
/** Index expressions over these read nothing a filter or sort could use. */
const NOT_INDEXED: readonly FieldType[] = ['multi_select', 'file', 'unknown'];

function checkDefault(type: FieldType, value: unknown, config: ColumnConfig, field: string, p: Problems) {
  const bad = (why: string) => p.add(field, `The default ${why}.`);
  switch (type) {
    case 'text':
    case 'long_text': {
      const max = config.max_length ?? (type === 'text' ? DATA_LIMITS.textMax : DATA_LIMITS.longTextMax);
      if (typeof value !== 'string') return bad('must be text');
      if (value.length > max) return bad(`may not be longer than ${max} characters`);
      return;
    }
    case 'email':
      if (typeof value !== 'string' || !EMAIL.test(value)) bad('must be an email address');
      return;
    case 'phone':
      if (typeof value !== 'string' || !/^\+?[0-9][0-9 ()-]{5,24}$/.test(value)) bad('must be a phone number');
      return;
    case 'number':
    case 'currency':
      if (typeof value !== 'number' || !Number.isFinite(value)) return bad('must be a number');
      if (config.min !== undefined && value < config.min) return bad(`may not be less than the minimum (${config.min})`);
      if (config.max !== undefined && value > config.max) return bad(`may not be greater than the maximum (${config.max})`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') bad('must be true or false');
      return;
    case 'date':
      if (typeof value !== 'string' || !DATE.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
        bad('must be a date (YYYY-MM-DD)');
      return;
    case 'datetime':
      if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) bad('must be a date and time (ISO 8601)');
      return;
    case 'select':
      if (typeof value !== 'string' || !(config.options ?? []).some((o) => o.key === value)) bad('must be one of the option keys');
      return;
    case 'multi_select':
      if (
        !Array.isArray(value) ||
        new Set(value).size !== value.length ||
        value.some((v) => typeof v !== 'string' || !(config.options ?? []).some((o) => o.key === v))
      )
        bad('must be a list of distinct option keys');
      return;
    case 'relation':
      if (typeof value !== 'string' || !UUID.test(value)) bad('must be a record id');
      return;
    default:
      bad(`is not allowed on a ${type} column`);
  }
}

/** A column type's config, checked and with its defaults filled in (phone region, currency, precision). */
function checkConfig(type: FieldType, raw: Record<string, unknown>, path: string, p: Problems, facts: AccountFacts): ColumnConfig {
  const at = (k: string) => `${path}.config.${k}`;
  const out: ColumnConfig = {};
  const allowed = CONFIG_KEYS[type];
  for (const k of Object.keys(raw))
    if (k !== 'default' && !allowed.includes(k)) p.add(at(k), `The ${k} setting does not apply to a ${type} column.`);
  const num = (k: 'min' | 'max') => {
    if (raw[k] === undefined || raw[k] === null) return;
    if (typeof raw[k] !== 'number' || !Number.isFinite(raw[k])) p.add(at(k), `The ${k} must be a number.`);
    else out[k] = raw[k];
  };
  switch (type) {
    case 'text':
    case 'long_text':
      if (raw.max_length !== undefined && raw.max_length !== null) {
        if (!isInt(raw.max_length, 1, DATA_LIMITS.longTextMax))
          p.add(at('max_length'), `The max length must be a whole number from 1 to ${DATA_LIMITS.longTextMax}.`);
        else out.max_length = raw.max_length as number;
      }
      break;
    case 'number':
    case 'currency': {
      const maxPrecision = type === 'number' ? 10 : 6;
      if (raw.precision !== undefined && raw.precision !== null) {
        if (!isInt(raw.precision, 0, maxPrecision))
          p.add(at('precision'), `The precision must be a whole number from 0 to ${maxPrecision}.`);
        else out.precision = raw.precision as number;
      } else if (type === 'currency') out.precision = 0;
      num('min');
      num('max');
      if (out.min !== undefined && out.max !== undefined && out.min > out.max) p.add(at('min'), 'The min may not be greater than the max.');
      if (type === 'currency') {
        const c = raw.currency ?? 'TZS';
        if (typeof c !== 'string' || !/^[A-Za-z]{3}$/.test(c)) p.add(at('currency'), 'The currency must be a 3-letter ISO 4217 code.');
        else out.currency = c.toUpperCase();
      }
      break;
    }
    case 'phone': {
      const r = raw.region ?? 'TZ';
      if (typeof r !== 'string' || !/^[A-Za-z]{2}$/.test(r)) p.add(at('region'), 'The region must be a 2-letter ISO 3166 region code.');
      else out.region = r.toUpperCase();
      break;
    }
    case 'select':
    case 'multi_select': {
      const options = raw.options;
      if (!Array.isArray(options) || options.length < 1 || options.length > DATA_LIMITS.selectOptions) {
        p.add(at('options'), `A ${type} column needs from 1 to ${DATA_LIMITS.selectOptions} options.`);
        break;
      }
      const seen = new Set<string>();
      out.options = [];
      options.forEach((o: unknown, i) => {
        const f = `${at('options')}.${i}`;
        const opt = (o ?? {}) as Record<string, unknown>;
        if (typeof o !== 'object' || o === null || Array.isArray(o)) return p.add(f, 'An option is an object with a key and a label.');
        if (typeof opt.key !== 'string' || !OPTION_KEY.test(opt.key))
          p.add(`${f}.key`, 'An option key is 1 to 64 lower case letters, digits, _ or -.');
        else if (seen.has(opt.key)) p.add(`${f}.key`, `The option key ${opt.key} is used twice.`);
        else seen.add(opt.key);
        if (typeof opt.label !== 'string' || !opt.label.trim() || opt.label.length > NAME_MAX)
          p.add(`${f}.label`, `An option needs a label of at most ${NAME_MAX} characters.`);
        if (opt.color !== undefined && opt.color !== null && (typeof opt.color !== 'string' || opt.color.length > 32))
          p.add(`${f}.color`, 'The color must be text of at most 32 characters.');
        const option: SelectOption = { key: String(opt.key), label: String(opt.label ?? '').trim() };
        if (typeof opt.color === 'string') option.color = opt.color;
        out.options!.push(option);
      });
      break;
    }
    case 'relation': {
      const id = raw.table_id;
      if (typeof id !== 'string' || !UUID.test(id) || !facts.tableIds.has(id.toLowerCase()))
        p.add(at('table_id'), 'A relation column needs the id of a table of this account.');
      else out.table_id = id.toLowerCase();
      break;
    }
    case 'file':
      if (raw.multiple !== undefined && raw.multiple !== null) {
        if (typeof raw.multiple !== 'boolean') p.add(at('multiple'), 'The multiple setting must be true or false.');
        else out.multiple = raw.multiple;
      }
      break;
    default:
      break;
  }
  if (raw.default !== undefined && raw.default !== null) {
    if (NO_DEFAULT.includes(type)) p.add(at('default'), `A ${type} column cannot have a default.`);
    else {
      checkDefault(type, raw.default, out, at('default'), p);
      out.default = raw.default;
    }
  }
  return out;
}

export function checkColumn(raw: ColumnInput, path: string, p: Problems, facts: AccountFacts): ColumnDraft | null {
  const key = typeof raw.key === 'string' ? raw.key : '';
  if (key.startsWith('$')) p.add(`${path}.key`, 'Keys starting with $ are system columns.');
  else if (!KEY.test(key))
    p.add(`${path}.key`, 'A column key starts with a lower case letter and holds up to 63 lower case letters, digits and _.');
  const label = raw.label === undefined ? labelOf(key) : String(raw.label).trim();
  if (!label || label.length > NAME_MAX) p.add(`${path}.label`, `The label must be 1 to ${NAME_MAX} characters.`);
  if (!(FIELD_TYPES as readonly string[]).includes(raw.type)) {
    p.add(`${path}.type`, `The type must be one of ${FIELD_TYPES.join(', ')}.`);
    return null;
  }
  const type = raw.type as FieldType;
  const storedType = raw.stored_type ?? null;
  if (storedType !== null && type !== 'unknown') p.add(`${path}.stored_type`, 'Only a column of type unknown has a stored type.');
  if (storedType !== null && (typeof storedType !== 'string' || !storedType || storedType.length > 64))
    p.add(`${path}.stored_type`, 'The stored type must be 1 to 64 characters.');
  if (raw.required && type === 'auto_number')
    p.add(`${path}.required`, 'An auto_number column is filled in by the service; callers cannot be required to send it.');
  if (raw.unique && NOT_UNIQUE.includes(type)) p.add(`${path}.unique`, `A ${type} column cannot be unique.`);
  if (raw.indexed && NOT_INDEXED.includes(type)) p.add(`${path}.indexed`, `A ${type} column cannot be indexed.`);
  const config = checkConfig(type, raw.config ?? {}, path, p, facts);
  return {
    key,
    label,
    type,
    stored_type: storedType,
    required: raw.required ?? false,
    unique: raw.unique ?? false,
    indexed: raw.indexed ?? false,
    config,
    ui: (raw.ui ?? {}) as ColumnUi,
  };
}
