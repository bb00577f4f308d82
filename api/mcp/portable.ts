import type { JsonSchema } from '../operation.js';

/**
 * The MCP projection of an operation's JSON Schema: what `tools/list` advertises. REST, OpenAPI
 * and the validator keep the full schema (ajv validates every tool call with it, so a refusal
 * still names the field); this view only has to guide a model, in a dialect every client takes.
 * An output schema is projected further, to its shape (`portableOutputSchema`): names, types,
 * nullability, enums, what is always present. Bounds, patterns, formats and field descriptions of
 * our own answers guide no caller (the manifest and the OpenAPI document keep them), and the
 * output schemas of every tool would otherwise double the list.
 *
 * Clients map tool schemas onto narrower dialects (Gemini's OpenAPI subset, OpenAI function
 * parameters) and refuse a whole tool list over one keyword they do not know; the MCP Inspector
 * warns on type arrays and on schemas that constrain nothing. So the projection keeps the
 * keywords those dialects share, and spends no bytes on what a model cannot act on: the NUL guard
 * pattern on every string, vendor `x-` keywords, examples, deep generic JSON values.
 *
 * The projection only ever loosens (a value the full schema accepts, the projection accepts):
 * the SDK client checks each `structuredContent` against the advertised output schema, so an
 * output projection that tightened anything would refuse real answers.
 */

/** Keywords kept as they are (after their subschemas are projected). */
const KEPT = new Set([
  'type',
  'enum',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'anyOf',
  'description',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'format',
  'default',
]);

/** What an output schema keeps: its shape. `additionalProperties: false` is dropped too (looser, and 28 bytes an object). */
const OUTPUT_KEPT = new Set(['type', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf']);

/** String formats the common function-calling dialects know; others become plain strings. */
const FORMATS = new Set(['date-time', 'date', 'time', 'email', 'uri', 'uuid']);

/** Keywords that say what a value is (the Inspector's "constrains" test, narrowed to what we keep). */
const CONSTRAINING = ['type', 'enum', 'anyOf', 'properties', 'items', 'additionalProperties', 'required'];

/** Constraints that apply to one JSON type, so a type array can be split into single-type branches. */
const BY_TYPE: Record<string, readonly string[]> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum'],
  integer: ['minimum', 'maximum'],
  array: ['items', 'minItems', 'maxItems'],
  object: ['properties', 'required', 'additionalProperties'],
  boolean: [],
  null: [],
};

const ALL_TYPES = ['string', 'number', 'boolean', 'object', 'array', 'null'] as const;
/** Any JSON value, spelled so that it constrains (a bare `{}` or `true` draws a portability warning). */
const anyValue = (): JsonSchema => ({ anyOf: ALL_TYPES.map((type) => ({ type })) });

/** Patterns kept only when short and plain ECMAScript: a 300-character date pattern guides no model, `(?i:` is not JavaScript. */
const MAX_PATTERN = 80;
/** The guard every string of the API carries against NUL (PostgreSQL text refuses it): noise to a model. */
const NUL_GUARD = '^[^\\u0000]*$';

/** Inline flag groups (`(?i:…)`): ES2025 and Python read them, most JavaScript engines and Gemini do not. */
export const INLINE_FLAGS = /\(\?[a-z-]+[:)]/i;

function portablePattern(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string' || pattern === NUL_GUARD || pattern.length > MAX_PATTERN || INLINE_FLAGS.test(pattern)) return undefined;
  try {
    new RegExp(pattern, 'u');
    return pattern;
  } catch {
    return undefined;
  }
}

/** Field descriptions: the first sentence, at most this long (the operation's OpenAPI text keeps the rest). */
export const MAX_FIELD_DESCRIPTION = 160;

export function shortDescription(text: string, max = MAX_FIELD_DESCRIPTION): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const first = /^(.+?[.!?])(?=\s+[A-Z(])/.exec(line)?.[1] ?? line;
  return first.length <= max ? first : `${first.slice(0, max - 1).trimEnd()}…`;
}

/** Object and array levels below which a value is described by its type only. */
const MAX_DEPTH = 4;

type Node = Record<string, unknown>;
const isNode = (v: unknown): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The projection of one schema position; `undefined` for a position that forbids everything (`false`). */
function project(schema: unknown, depth: number, kept: ReadonlySet<string>, whole = true): JsonSchema | undefined {
  if (schema === false || forbidsAll(schema)) return undefined;
  if (!isNode(schema)) return anyValue();
  if (depth > MAX_DEPTH) return typeOnly(schema);

  const out: Node = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'const') out.enum = [value];
    else if (key === 'oneOf')
      out.anyOf = value; // oneOf over loosened branches could match twice
    else if (kept.has(key)) out[key] = value;
  }
  if (kept === OUTPUT_KEPT && out.additionalProperties === false) delete out.additionalProperties;
  // Dropped keywords that exempt values from kept ones: without them, `additionalProperties` and
  // `items` would refuse what patternProperties and prefixItems admit (a projection only loosens).
  if ('patternProperties' in schema) delete out.additionalProperties;
  if ('prefixItems' in schema) delete out.items;
  if (typeof out.description === 'string') out.description = shortDescription(out.description);
  if ('pattern' in out) {
    const pattern = portablePattern(out.pattern);
    if (pattern === undefined) delete out.pattern;
    else out.pattern = pattern;
  }
  if ('format' in out && !FORMATS.has(String(out.format))) delete out.format;

  if (isNode(out.properties)) {
    const properties: Node = {};
    for (const [name, sub] of Object.entries(out.properties)) {
      const projected = project(sub, depth + 1, kept);
      // A property the full schema forbids is left out: the tool call is validated with the full one.
      if (projected !== undefined) properties[name] = projected;
    }
    out.properties = properties;
  }
  if (Array.isArray(out.required)) {
    const properties = isNode(out.properties) ? out.properties : undefined;
    const required = out.required.filter((name) => !properties || typeof name !== 'string' || name in properties);
    if (required.length) out.required = required;
    else delete out.required;
  }
  if ('items' in out) {
    if (isNode(out.items)) out.items = project(out.items, depth + 1, kept) ?? anyValue();
    else delete out.items;
  }
  if (isNode(out.additionalProperties)) out.additionalProperties = project(out.additionalProperties, depth + 1, kept) ?? false;
  if (Array.isArray(out.anyOf)) {
    const branches = flatBranches(out.anyOf.map((b) => project(b, depth, kept)).filter((b): b is JsonSchema => b !== undefined));
    if (!branches.length) delete out.anyOf;
    // A union that admits every JSON type is a generic value: said once, not unrolled level by level.
    else if (coversEveryType(branches)) out.anyOf = anyValue().anyOf;
    else out.anyOf = branches;
  }
  mergeAllOf(out, schema.allOf, depth, kept);
  if (Array.isArray(out.enum)) delete out.type; // the values say it, and an enum mixing types needs no type union
  if (Array.isArray(out.type)) splitTypes(out);
  // A whole schema position must say what it holds; an allOf branch only adds to its parent.
  if (whole && !CONSTRAINING.some((k) => k in out)) Object.assign(out, anyValue());
  return out as JsonSchema;
}

/** `{not: {}}` (with at most a description or an `x-` message beside it): the full schema's way of forbidding a field. */
function forbidsAll(schema: unknown): boolean {
  if (!isNode(schema) || !('not' in schema)) return false;
  const not = schema.not;
  const everything = not === true || (isNode(not) && Object.keys(not).length === 0);
  return everything && Object.keys(schema).every((k) => k === 'not' || k === 'description' || k.startsWith('x-'));
}

/** Nested unions spliced into one (`anyOf` of `anyOf`), repeated branches once. */
function flatBranches(branches: JsonSchema[]): JsonSchema[] {
  const out: JsonSchema[] = [];
  const seen = new Set<string>();
  for (const branch of branches) {
    const keys = Object.keys(branch);
    const inner = keys.length === 1 && Array.isArray(branch.anyOf) ? (branch.anyOf as JsonSchema[]) : [branch];
    for (const b of inner) {
      const key = JSON.stringify(b);
      if (seen.has(key)) continue;
      seen.add(key);
      out.push(b);
    }
  }
  return out;
}

function coversEveryType(branches: JsonSchema[]): boolean {
  const types = new Set(branches.map((b) => b.type).filter((t): t is string => typeof t === 'string'));
  if (types.has('integer')) types.add('number');
  return ALL_TYPES.every((t) => types.has(t));
}

/**
 * `allOf` is folded into the node where its keywords do not collide (exactly the same meaning);
 * a branch that collides is dropped (looser), since several clients refuse `allOf` outright.
 */
function mergeAllOf(out: Node, allOf: unknown, depth: number, kept: ReadonlySet<string>): void {
  if (!Array.isArray(allOf)) return;
  for (const branch of allOf) {
    const projected = project(branch, depth, kept, false);
    if (!isNode(projected) || 'anyOf' in projected) continue;
    const objectKeys = ['properties', 'required', 'additionalProperties'];
    const touchesObject = objectKeys.some((k) => k in projected);
    if (touchesObject && objectKeys.some((k) => k in out)) continue;
    for (const [key, value] of Object.entries(projected)) {
      if (key === 'description' || key in out) continue;
      out[key] = value;
    }
  }
}

/** `type: ['string','null']` becomes `anyOf` with one `type` each, every constraint on the branch it applies to. */
function splitTypes(out: Node): void {
  const types = (out.type as unknown[]).filter((t): t is string => typeof t === 'string' && t in BY_TYPE);
  delete out.type;
  const branches = types.map((type) => {
    const branch: Node = { type };
    for (const key of BY_TYPE[type]!) if (key in out) branch[key] = out[key];
    return branch;
  });
  for (const key of new Set(Object.values(BY_TYPE).flat())) delete out[key];
  if (branches.length === 1) Object.assign(out, branches[0]);
  else if (branches.length > 1) {
    const existing = Array.isArray(out.anyOf) ? out.anyOf : undefined;
    // A type union beside an anyOf: the anyOf already narrows, the types only restate it.
    if (!existing) out.anyOf = branches;
  }
}

/** A value past the depth limit: its type (or the types its branches allow) and nothing else. */
function typeOnly(schema: Node): JsonSchema {
  const types = new Set<string>();
  const collect = (s: unknown) => {
    if (!isNode(s)) return ALL_TYPES.forEach((t) => types.add(t));
    if (typeof s.type === 'string') types.add(s.type);
    else if (Array.isArray(s.type)) s.type.forEach((t) => typeof t === 'string' && types.add(t));
    else if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) ((s.anyOf ?? s.oneOf) as unknown[]).forEach(collect);
    else ALL_TYPES.forEach((t) => types.add(t));
  };
  collect(schema);
  if (types.has('number')) types.delete('integer');
  const list = [...types];
  return list.length === 1 ? { type: list[0] } : { anyOf: list.map((type) => ({ type })) };
}

/** The MCP view of a tool's input schema (an object schema in, an object schema out). */
export function portableSchema(schema: JsonSchema): JsonSchema & { type: 'object' } {
  const projected = project(schema, 0, KEPT) ?? {};
  return { ...projected, type: 'object' } as JsonSchema & { type: 'object' };
}

/**
 * The MCP view of a tool's output schema: its shape only (OUTPUT_KEPT), an object schema in, an
 * object schema out. Like the input projection it only loosens, so every answer the full schema
 * accepts (CHECK_ANSWERS holds each one to it in the suite) the advertised schema accepts.
 */
export function portableOutputSchema(schema: JsonSchema): JsonSchema & { type: 'object' } {
  const projected = project(schema, 0, OUTPUT_KEPT) ?? {};
  return { ...projected, type: 'object' } as JsonSchema & { type: 'object' };
}
