import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MAX_TOOL_DESCRIPTION,
  buildManifest,
  mayUse,
  operationsOf,
  scopeShortfall,
  structuredSchemaOf,
  toolOf,
  toolOperations,
} from '../../api/mcp/tools.js';
import type { McpPrincipal } from '../../api/http/auth.js';
import { CAPABILITY_SCOPES, ELEVATION_SCOPES, missingScopes, scopesNeeded } from '../../domain/oauth/index.js';
import { INLINE_FLAGS, MAX_FIELD_DESCRIPTION, portableOutputSchema, portableSchema } from '../../api/mcp/portable.js';
import { MCP_SERVERS, defineOperation, toolInputSchema } from '../../api/operation.js';
import { makeAjv } from '../../services/platform/validation.js';

// What tools/list advertises (issue 25, point 6; issue 27, point 5): small enough for a client's
// context, in the JSON Schema every client takes (no construct the Inspector flags or a
// function-calling dialect refuses), one line per tool, each tool's output schema; and the
// projections only loosen, so a valid call and a real answer still fit them.

/** The keywords a projected schema may use: the subset Gemini's and OpenAI's tool dialects share. */
const ALLOWED = new Set([
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
const CONSTRAINING = ['type', 'enum', 'anyOf', 'properties', 'items', 'additionalProperties', 'required'];

/** Every problem with one schema position, the MCP Inspector's lint rules and ours. */
function problems(schema: unknown, at: string, out: string[] = []): string[] {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    out.push(`${at}: a bare ${JSON.stringify(schema)} where a schema object is expected`);
    return out;
  }
  const node = schema as Record<string, unknown>;
  for (const key of Object.keys(node)) if (!ALLOWED.has(key)) out.push(`${at}: keyword ${key}`);
  if (Array.isArray(node.type)) out.push(`${at}: type union ${JSON.stringify(node.type)}`);
  if (!CONSTRAINING.some((k) => k in node)) out.push(`${at}: constrains nothing`);
  if (typeof node.pattern === 'string') {
    if (INLINE_FLAGS.test(node.pattern)) out.push(`${at}: pattern with inline flags`);
    try {
      new RegExp(node.pattern, 'u');
    } catch {
      out.push(`${at}: pattern is not ECMAScript`);
    }
  }
  if (typeof node.description === 'string' && (node.description.length > MAX_FIELD_DESCRIPTION || /\n/.test(node.description)))
    out.push(`${at}: description of ${node.description.length} characters`);
  if (typeof node.properties === 'object' && node.properties)
    for (const [name, sub] of Object.entries(node.properties)) problems(sub, `${at}.properties.${name}`, out);
  if ('items' in node) problems(node.items, `${at}.items`, out);
  if (typeof node.additionalProperties === 'object') problems(node.additionalProperties, `${at}.additionalProperties`, out);
  if (Array.isArray(node.anyOf)) node.anyOf.forEach((b, i) => problems(b, `${at}.anyOf[${i}]`, out));
  return out;
}

// The all-tools list grows with every family (occasions and oauth took it past 200 KB, forms, flows
// and posts past 256 KB); an assistant with a small context connects to one server instead
// (docs/architecture.md, MCP servers), so each server keeps the tight budget and /mcp a looser one.
test('tools/list with output schemas: under 320 KB on /mcp (every tool), under 100 KB on each server', () => {
  const bytes = (tools: unknown[]) => Buffer.byteLength(JSON.stringify({ tools }));
  const all = operationsOf('all').map(toolOf);
  assert.ok(all.length >= 80, `${all.length} tools`);
  assert.ok(bytes(all) < 320 * 1024, `tools/list on /mcp is ${bytes(all)} bytes`);
  for (const key of MCP_SERVERS) {
    const size = bytes(operationsOf(key).map(toolOf));
    assert.ok(size < 100 * 1024, `tools/list on /mcp/v1/${key} is ${size} bytes`);
  }
});

test('every tool schema is portable: no keyword outside the shared subset, no type union, nothing unconstrained', () => {
  const found = toolOperations.flatMap((op) => [
    ...problems(toolOf(op).inputSchema, `${op.name} input`),
    ...problems(toolOf(op).outputSchema, `${op.name} output`),
  ]);
  assert.deepEqual(found.slice(0, 20), []);
  for (const op of toolOperations) {
    const tool = toolOf(op);
    assert.equal(tool.inputSchema.type, 'object', op.name);
    assert.equal(tool.outputSchema.type, 'object', `${op.name}: structured output is an object at the root (MCP 2025-11-25)`);
    assert.deepEqual(tool.outputSchema, portableOutputSchema(structuredSchemaOf(op)), op.name);
  }
});

test('an output schema says the shape only: names, types, nullability, enums, required fields', () => {
  const SHAPE = new Set(['type', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf']);
  const keywords = (schema: unknown, out = new Set<string>()): Set<string> => {
    if (typeof schema !== 'object' || schema === null) return out;
    const node = schema as Record<string, unknown>;
    for (const key of Object.keys(node)) out.add(key);
    for (const sub of Object.values((node.properties as object) ?? {})) keywords(sub, out);
    for (const sub of [node.items, node.additionalProperties, ...((node.anyOf as unknown[]) ?? [])]) keywords(sub, out);
    return out;
  };
  for (const op of toolOperations) {
    const extra = [...keywords(toolOf(op).outputSchema)].filter((k) => !SHAPE.has(k));
    assert.deepEqual(extra, [], op.name);
    assert.ok(!JSON.stringify(toolOf(op).outputSchema).includes('"additionalProperties":false'), op.name);
  }
  const order = toolOf(toolOperations.find((op) => op.name === 'get_order')!).outputSchema as any;
  assert.ok(order.required.includes('id') && order.required.includes('status'));
  assert.deepEqual(order.properties.id, { type: 'integer' });
  assert.ok(order.properties.status.enum.includes('delivered'));
  assert.deepEqual(order.properties.customer_handle, { anyOf: [{ type: 'string' }, { type: 'null' }] });
});

test('a non-object answer is advertised and returned as {result}', () => {
  const op = defineOperation({
    name: 'probe_count',
    method: 'GET',
    path: '/api/v3/probe',
    tag: 'Probe',
    summary: 'Count',
    auth: 'rest',
    output: { kind: 'outcome', status: 200, description: 'A count', schema: { type: 'integer', minimum: 0 } },
    mcp: { servers: ['overview'], scope: 'mcp:overview' },
    handler: async () => 3,
  });
  assert.deepEqual(toolOf(op).outputSchema, { type: 'object', properties: { result: { type: 'integer' } }, required: ['result'] });
});

test('every tool description is one line of at most 200 characters; title and description say what the tool does', () => {
  for (const op of toolOperations) {
    const { title, description } = toolOf(op);
    assert.doesNotMatch(description, /\n/, op.name);
    assert.ok(description.length <= MAX_TOOL_DESCRIPTION, `${op.name}: ${description.length} characters`);
    assert.ok(description.length >= 10, op.name);
    assert.ok(title && !/\n/.test(title), op.name);
  }
});

test('the projection only loosens: a call the full schema accepts, the advertised schema accepts', () => {
  const ajv = makeAjv({ allErrors: true, strict: false });
  // Probes drawn from the schemas themselves: each property's example or default, else a value of its first type.
  const sample = (s: Record<string, unknown>): unknown => {
    if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
    if ('default' in s) return s.default;
    if ('const' in s) return s.const;
    if (Array.isArray(s.enum)) return s.enum[0];
    return undefined;
  };
  let checked = 0;
  for (const op of toolOperations) {
    const full = toolInputSchema(op) as { properties?: Record<string, Record<string, unknown>> };
    const validFull = ajv.compile(full);
    const validPortable = ajv.compile(toolOf(op).inputSchema);
    const args: Record<string, unknown> = {};
    for (const [name, prop] of Object.entries(full.properties ?? {})) {
      const v = sample(prop);
      if (v !== undefined) args[name] = v;
    }
    for (const p of op.params) args[p] = '1';
    if (validFull(args)) {
      checked++;
      assert.ok(validPortable(args), `${op.name}: ${JSON.stringify(validPortable.errors)}`);
    }
  }
  assert.ok(checked >= 10, `${checked} tools probed`);
});

test('projection rules: unions split, const as enum, forbidden fields left out, generic values once, allOf folded', () => {
  const p = portableSchema({
    type: 'object',
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    properties: {
      note: { type: ['string', 'null'], maxLength: 10, pattern: '^[^\\u0000]*$', 'x-error': 'no' },
      kind: { const: 'text' },
      gone: false,
      hidden: { not: {}, 'x-error': 'The hidden field is not allowed.' },
      choice: { oneOf: [{ type: 'string' }, { type: 'integer' }] },
      value: {
        anyOf: [
          { type: ['string', 'number', 'boolean', 'null'] },
          { type: 'array', items: { type: 'string' } },
          { type: 'object', additionalProperties: { type: 'string' }, propertyNames: { pattern: '^a' } },
        ],
      },
      phone: { allOf: [{ type: 'string' }, { maxLength: 64 }] },
      when: { type: 'string', format: 'date-time' },
      code: { type: 'string', format: 'my-format', pattern: '^\\s*(?i:a|b)$' },
      anything: {},
    },
    if: { properties: { kind: { const: 'x' } } },
    then: { required: ['note'] },
  });
  assert.deepEqual(p, {
    type: 'object',
    properties: {
      note: { anyOf: [{ type: 'string', maxLength: 10 }, { type: 'null' }] },
      kind: { enum: ['text'] },
      choice: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
      value: { anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })) },
      phone: { type: 'string', maxLength: 64 },
      when: { type: 'string', format: 'date-time' },
      code: { type: 'string' },
      anything: { anyOf: ['string', 'number', 'boolean', 'object', 'array', 'null'].map((type) => ({ type })) },
    },
  });
});

test('both projections only loosen: neither keeps a keyword that could refuse what a dropped one admits', () => {
  const ajv = makeAjv({ allErrors: true, strict: false });
  const full = {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'tags', 'extra_1'],
    properties: {
      id: { type: 'string', pattern: '^[a-z]+$', minLength: 3, format: 'hostname', description: 'The id' },
      tags: { type: 'array', prefixItems: [{ type: 'integer' }], items: { type: 'string' } },
      hidden: { not: {} },
      deep: {
        type: 'object',
        properties: {
          a: {
            type: 'object',
            properties: { b: { type: 'object', properties: { c: { type: 'object', properties: { d: { type: 'integer' } } } } } },
          },
        },
      },
    },
    patternProperties: { '^extra_': { type: 'integer' } },
  };
  const answers = [
    { id: 'abcd', tags: [1, 'x'], extra_1: 5 },
    { id: 'abc', tags: [2], extra_1: 0, deep: { a: { b: { c: { d: 1 } } } } },
  ];
  const validFull = ajv.compile(full);
  for (const [name, projection] of [
    ['output', portableOutputSchema],
    ['input', portableSchema],
  ] as const) {
    const validAdvertised = ajv.compile(projection(full));
    for (const a of answers) {
      assert.ok(validFull(a), JSON.stringify(validFull.errors));
      assert.ok(validAdvertised(a), `${name} ${JSON.stringify(a)}: ${JSON.stringify(validAdvertised.errors)}`);
    }
  }
});

test('the manifest carries each tool as tools/list shows it and its full output schema; empty servers say why', () => {
  const manifest = buildManifest(['2026-07-28']);
  for (const op of toolOperations) {
    const entry = manifest.tools.find((t) => t.name === op.name)!;
    assert.equal(entry.fullOutputSchema, op.output.schema, op.name);
    assert.deepEqual(entry.outputSchema, toolOf(op).outputSchema, op.name);
  }
});

test('scopes: every tool names a capability of the contract; every tool that is not a read needs an elevation, no read does', () => {
  for (const op of toolOperations) {
    const { scope, elevation, annotations } = op.mcp!;
    assert.ok((CAPABILITY_SCOPES as readonly string[]).includes(scope), `${op.name}: ${scope}`);
    if (annotations?.readOnlyHint === true) assert.equal(elevation, undefined, `${op.name} reads and needs no elevation`);
    else assert.ok(elevation && (ELEVATION_SCOPES as readonly string[]).includes(elevation), `${op.name} changes something: ${elevation}`);
  }
  assert.deepEqual(scopesNeeded({ scope: 'mcp:contacts', elevation: 'mcp:write' }), ['mcp:use', 'mcp:contacts', 'mcp:write']);
  assert.deepEqual(missingScopes(['mcp:use', 'mcp:write'], { scope: 'mcp:contacts', elevation: 'mcp:write' }), ['mcp:contacts']);
  assert.deepEqual(missingScopes(['mcp:use', 'mcp:contacts'], { scope: 'mcp:contacts' }), []);
});

test('a token lists the tools of its capabilities its person may use, elevation-needing ones included; an svc_mcp_ credential lacks no scope', () => {
  const op = (name: string) => toolOperations.find((o) => o.name === name)!;
  const person = (permissions: string[]) => ({ id: 1, active: true, permissions });
  const oauth = (scopes: string[], permissions = ['*']) =>
    ({
      account: {},
      user: person(permissions),
      grant: { grantId: 'g', clientId: 'c', scopes, resource: 'r', expiresAt: 0 },
    }) as unknown as McpPrincipal;
  const token = oauth(['mcp:use', 'mcp:contacts']);
  assert.equal(mayUse(token, op('list_contact_groups')), true);
  assert.equal(mayUse(token, op('create_contact_group')), true, 'listed without mcp:write');
  assert.deepEqual(scopeShortfall(token, op('create_contact_group')), ['mcp:write']);
  assert.equal(mayUse(token, op('get_profile')), false, 'mcp:overview not ticked');
  assert.equal(
    mayUse(oauth(['mcp:use', 'mcp:contacts'], ['contacts.view']), op('create_contact_group')),
    false,
    'contacts.create not held',
  );
  assert.equal(mayUse({ ...token, user: { ...person(['*']), active: false } } as McpPrincipal, op('list_contact_groups')), false);
  const credential = { account: {}, key: { id: 1 }, user: person(['*']) } as unknown as McpPrincipal;
  for (const o of toolOperations) assert.deepEqual(scopeShortfall(credential, o), [], o.name);
});
