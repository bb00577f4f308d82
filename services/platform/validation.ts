import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { validationFailed, type FieldErrors } from './errors.js';
import { storableObject } from './storable.js';
import { DATE_TIME_PATTERN, isDateTime } from '../../domain/platform/date-time.js';

// ajv ships CommonJS; createRequire gives the constructors without default-export guesswork.
const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js').default;
const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;

export type JsonSchema = Record<string, unknown>;

type AjvOptions = ConstructorParameters<typeof Ajv2020>[0];

/**
 * An ajv with ajv-formats, `date-time` narrowed to what PostgreSQL accepts
 * (domain/platform/date-time.ts): RFC 3339 admits offsets up to 23:59 and the year 0000, and such a
 * value failed its statement (a 500) instead of the request (a 422). Every ajv of the service is
 * made here, so every field of every operation, at every door, reads date-times the same way.
 */
export function makeAjv(options: AjvOptions): InstanceType<typeof Ajv2020> {
  const ajv = new Ajv2020(options);
  addFormats(ajv);
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  return ajv;
}

// verbose: each error carries the schema it failed, so a rule can word its own refusal (x-error).
const bodyAjv = makeAjv({ allErrors: true, strict: false, useDefaults: false, verbose: true });
// Query strings arrive as text: coerce "2" to 2 and "true" to true, as users of any REST API expect.
const queryAjv = makeAjv({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true, verbose: true });

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
  // A rule between fields (x-error) may name the field its refusal is filed under.
  const named = (e.parentSchema as Record<string, unknown> | undefined)?.[X_ERROR_FIELD];
  if (typeof named === 'string') return [base, named].filter(Boolean).join('.');
  if (e.keyword === 'required') return [base, (e.params as { missingProperty: string }).missingProperty].filter(Boolean).join('.');
  if (e.keyword === 'additionalProperties')
    return [base, (e.params as { additionalProperty: string }).additionalProperty].filter(Boolean).join('.');
  return base || 'body';
}

/**
 * A schema may word its own refusal with `x-error` (a rule between fields, say "A reaction cannot
 * carry text."); otherwise the message is built from the keyword.
 */
export const X_ERROR = 'x-error';
/** Beside x-error: the field a rule between fields files its refusal under (default: where it failed). */
export const X_ERROR_FIELD = 'x-error-field';

/** The field a message speaks of: its last name, an array item as "<list> item" (never a bare index). */
function nameOf(field: string): string {
  const parts = field.split('.');
  const last = parts.pop()!;
  if (!/^\d+$/.test(last)) return last.replace(/_/g, ' ');
  const list = [...parts].reverse().find((x) => !/^\d+$/.test(x));
  return `${(list ?? 'list').replace(/_/g, ' ')} item`;
}

/** A refused value as the message quotes it (short: the field error is read by people and models). */
function shownValue(v: unknown): string {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? String(v));
  return `'${text.length > 60 ? `${text.slice(0, 59)}…` : text}'`;
}

// Messages in the style clients of the contract already parse (one sentence per field problem).
function messageOf(field: string, e: ErrorObject): string {
  const own = (e.parentSchema as Record<string, unknown> | undefined)?.[X_ERROR];
  if (typeof own === 'string') return own;
  const name = nameOf(field);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return `The ${name} field is required.`;
    case 'maxLength':
      return `The ${name} may not be greater than ${p.limit} characters.`;
    case 'minLength':
      return Number(p.limit) <= 1 ? `The ${name} field is required.` : `The ${name} must be at least ${p.limit} characters.`;
    case 'maxItems':
      return `The ${name} may not have more than ${p.limit} items.`;
    case 'minItems':
      return `The ${name} must have at least ${p.limit} items.`;
    case 'maximum':
      return `The ${name} may not be greater than ${p.limit}.`;
    case 'minimum':
      return `The ${name} must be at least ${p.limit}.`;
    case 'type':
      return `The ${name} must be ${p.type === 'array' ? 'an array' : p.type === 'integer' ? 'an integer' : `a ${p.type}`}.`;
    case 'enum':
      // The value is named: a list (permissions, tables) may hold several, and "the selected 0" said none of them.
      return e.data === undefined ? `The selected ${name} is invalid.` : `The selected ${name} ${shownValue(e.data)} is invalid.`;
    case 'format':
      return `The ${name} format is invalid.`;
    case 'additionalProperties':
      return `The ${name} field is not allowed.`;
    case 'pattern':
      return `The ${name} format is invalid.`;
    default:
      return `The ${name} is invalid.`;
  }
}

/** On a schema with a oneOf: the sentence its refusal is answered with, and the field it is filed under. */
export const X_ONE_OF_ERROR = 'x-one-of-error';

function oneOfWording(e: ErrorObject): { message: string; field?: string } | undefined {
  const own = (e.parentSchema as Record<string, unknown> | undefined)?.[X_ONE_OF_ERROR];
  return own !== null && typeof own === 'object' ? (own as { message: string; field?: string }) : undefined;
}

export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldErrors {
  // Field names come from the request: a field named __proto__ must be a key like any other, so the
  // messages gather in a Map and become an object through fromEntries (own keys, no prototype setter).
  const out = new Map<string, string[]>();
  // A oneOf that words its own refusal (x-one-of-error: "send one kind of content") is answered by
  // that sentence alone: the errors of each branch it tried would only list every field it names.
  const worded = (errors ?? []).filter((e) => e.keyword === 'oneOf' && typeof oneOfWording(e)?.message === 'string');
  for (const e of errors ?? []) {
    if (worded.includes(e)) {
      const { message, field } = oneOfWording(e)!;
      out.set(field ?? fieldOf(e), [message]);
      continue;
    }
    if (worded.some((w) => e.schemaPath.startsWith(`${w.schemaPath}/`))) continue;
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    // Items that did not match a `contains` are not each wrong: the contains error itself says what is missing.
    if (e.schemaPath.includes('/contains/')) continue;
    const field = fieldOf(e);
    const message = messageOf(field, e);
    // One rule can be reached twice (a reaction named by its object and by message_type): say it once.
    const list = out.get(field) ?? [];
    if (!list.includes(message)) list.push(message);
    out.set(field, list);
  }
  return Object.fromEntries(out);
}

const cache = new WeakMap<object, ValidateFunction>();

function compile(ajv: typeof bodyAjv, schema: JsonSchema): ValidateFunction {
  let fn = cache.get(schema);
  if (!fn) {
    fn = ajv.compile(schema);
    cache.set(schema, fn);
  }
  return fn;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATE_ALL = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * NUL and unpaired UTF-16 surrogates (JSON escapes such as "\\ud800" produce them) cannot be stored:
 * PostgreSQL refuses NUL in text and jsonb, and an unpaired surrogate is silently replaced on the way
 * there. Returns the dotted path of the first string or object key holding one (undefined: none).
 * Iterative, so a value of any depth is walked without recursion.
 */
export function unstorableTextAt(value: unknown, base = ''): string | undefined {
  const bad = (s: string) => s.includes('\0') || LONE_SURROGATE.test(s);
  const stack: Array<[unknown, string]> = [[value, base]];
  while (stack.length) {
    const [v, at] = stack.pop()!;
    if (typeof v === 'string') {
      if (bad(v)) return at;
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        // A refused key is named readably in the answer: NUL as \0, an unpaired surrogate as U+FFFD.
        const name = bad(k) ? k.replace(/\0/g, '\\0').replace(LONE_SURROGATE_ALL, '\uFFFD') : k;
        const path = at ? `${at}.${name}` : name;
        if (bad(k)) return path;
        stack.push([child, path]);
      }
    }
  }
  return undefined;
}

/** 422 naming the field when a value holds text that cannot be stored (see unstorableTextAt). */
export function refuseUnstorableText(value: unknown, base = ''): void {
  const at = unstorableTextAt(value, base);
  if (at === undefined) return;
  const field = at || 'body';
  throw validationFailed({
    [field]: [`The ${field.split('.').pop()!.replace(/_/g, ' ')} contains a NUL character or an unpaired surrogate.`],
  });
}

/**
 * What storage refuses, stated in an operation's schemas where they do not state it already: every
 * integer an operation accepts reaches an int4 column or an int4-sized id, and a value beyond it
 * would fail the statement (a 500) instead of the request (a 422); strings and object keys may not
 * hold a NUL. Applied once to each operation's schemas, so ajv, the OpenAPI document and the MCP
 * tools all state the same bounds.
 */
export const INT4_MAX = 2_147_483_647;
const NO_NUL = '^[^\\u0000]*$';
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
export function withStorageBounds<S>(schema: S, root = true): S {
  if (Array.isArray(schema)) return schema.map((s: unknown) => withStorageBounds(s, false)) as S;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    // const, enum, default and examples are values, not schemas; properties and the like are maps of schemas.
    if (k === 'const' || k === 'enum' || k === 'default' || k === 'examples') out[k] = v;
    else if (SCHEMA_MAPS.has(k) && v !== null && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v).map(([name, sub]) => [name, withStorageBounds(sub, false)]));
    else out[k] = withStorageBounds(v, false);
  }
  const types = ([] as unknown[]).concat(out.type ?? []);
  // The date-time format is narrowed to what PostgreSQL accepts (makeAjv); the document says so.
  if (out.format === 'date-time' && out.pattern === undefined) out.pattern = DATE_TIME_PATTERN;
  // Text is refused with a NUL (refuseUnstorableText); the schema says so, for strings and keys.
  if (types.includes('string') && out.pattern === undefined) out.pattern = NO_NUL;
  if ((types.includes('object') || out.properties !== undefined) && out.propertyNames === undefined)
    out.propertyNames = { pattern: NO_NUL };
  // Fields a body does not name are accepted (and ignored or kept as sent), but only when storable:
  // text without NUL, nested at most a few levels; said here so the document admits what the server
  // does. At the body's top level only: written into every nested object it would multiply the
  // document (and every MCP tool listing) many times over for fields nobody sends.
  if (root && types.includes('object') && out.additionalProperties === undefined && out.unevaluatedProperties === undefined)
    out.additionalProperties = withStorageBounds(storableObject.additionalProperties, false);
  if (types.includes('integer')) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = INT4_MAX;
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = -INT4_MAX - 1;
  }
  return out as S;
}

export function validateBody<T>(schema: JsonSchema, data: unknown): T {
  refuseUnstorableText(data);
  const fn = compile(bodyAjv, schema);
  if (!fn(data)) throw validationFailed(toFieldErrors(fn.errors));
  return data as T;
}

export function validateQuery<T>(schema: JsonSchema, data: Record<string, unknown>): T {
  refuseUnstorableText(data);
  const fn = compile(queryAjv, schema);
  const copy = { ...data };
  if (!fn(copy)) throw validationFailed(toFieldErrors(fn.errors));
  for (const key of queryBooleansOf(schema)) if (key in copy) copy[key] = copy[key] === true || copy[key] === 'true' || copy[key] === '1';
  return copy as T;
}

/**
 * The one boolean of a query (docs/architecture.md, "One presentation rule"): `true`, `false`, `1` or
 * `0` in a query string, and a real boolean from an MCP client, whose tool arguments are JSON. Any
 * other spelling (yes, TRUE, 2, empty) is a 422 naming the field. The handler receives a boolean.
 */
export const QUERY_BOOLEAN_VALUES = [true, false, 'true', 'false', '1', '0'] as const;
/** Marks a query field as that boolean, so validateQuery hands the handler true or false. */
const QUERY_BOOLEAN = 'x-query-boolean';

/**
 * An operation's query schema with every `type: 'boolean'` field read the one way above. Applied
 * by defineOperation to every operation's query, so REST, MCP and both OpenAPI documents state and
 * accept the same values, and a new query boolean cannot refuse `1`.
 */
export function withQueryBooleans(schema: JsonSchema): JsonSchema {
  const props = schema.properties as Record<string, JsonSchema> | undefined;
  if (!props) return schema;
  const fields = Object.entries(props).map(([key, field]) => {
    if (field.type !== 'boolean') return [key, field];
    const { type: _boolean, ...rest } = field;
    return [key, { ...rest, enum: [...QUERY_BOOLEAN_VALUES], [QUERY_BOOLEAN]: true }];
  });
  return { ...schema, properties: Object.fromEntries(fields) };
}

const booleanKeys = new WeakMap<object, string[]>();
function queryBooleansOf(schema: JsonSchema): string[] {
  let keys = booleanKeys.get(schema);
  if (!keys) {
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    keys = Object.keys(props).filter((k) => props[k]?.[QUERY_BOOLEAN] === true);
    booleanKeys.set(schema, keys);
  }
  return keys;
}
