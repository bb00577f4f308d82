import { createRequire } from 'node:module';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { validationFailed, type FieldErrors } from './errors.js';

// ajv ships CommonJS; createRequire gives the constructors without default-export guesswork.
const require = createRequire(import.meta.url);
const Ajv2020 = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js').default;
const addFormats = require('ajv-formats') as typeof import('ajv-formats').default;

export type JsonSchema = Record<string, unknown>;

// verbose: each error carries the schema it failed, so a rule can word its own refusal (x-error).
const bodyAjv = new Ajv2020({ allErrors: true, strict: false, useDefaults: false, verbose: true });
// Query strings arrive as text: coerce "2" to 2 and "true" to true, as users of any REST API expect.
const queryAjv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: 'array', useDefaults: true, verbose: true });
addFormats(bodyAjv);
addFormats(queryAjv);

function fieldOf(e: ErrorObject): string {
  const base = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
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

// Messages in the style clients of the contract already parse (one sentence per field problem).
function messageOf(field: string, e: ErrorObject): string {
  const own = (e.parentSchema as Record<string, unknown> | undefined)?.[X_ERROR];
  if (typeof own === 'string') return own;
  const name = field.split('.').pop()!.replace(/_/g, ' ');
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
      return `The selected ${name} is invalid.`;
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

export function toFieldErrors(errors: ErrorObject[] | null | undefined): FieldErrors {
  const out: FieldErrors = {};
  for (const e of errors ?? []) {
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') continue;
    const field = fieldOf(e);
    const message = messageOf(field, e);
    // One rule can be reached twice (a reaction named by its object and by message_type): say it once.
    const list = (out[field] ??= []);
    if (!list.includes(message)) list.push(message);
  }
  return out;
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

export function validateBody<T>(schema: JsonSchema, data: unknown): T {
  const fn = compile(bodyAjv, schema);
  if (!fn(data)) throw validationFailed(toFieldErrors(fn.errors));
  return data as T;
}

export function validateQuery<T>(schema: JsonSchema, data: Record<string, unknown>): T {
  const fn = compile(queryAjv, schema);
  const copy = { ...data };
  if (!fn(copy)) throw validationFailed(toFieldErrors(fn.errors));
  return copy as T;
}
