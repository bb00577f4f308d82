import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { customerOperations, operatorOperations } from '../../api/operations.js';
import { defineOperation, wrappedResourceAt, type JsonSchema, type OperationOutput } from '../../api/operation.js';
import { restRoute } from '../../api/http/rest.js';
import { successOf } from '../../api/http/registry.js';
import { buildManifest } from '../../api/mcp/tools.js';
import { QUERY_BOOLEAN_VALUES, validateQuery, withQueryBooleans } from '../../services/platform/validation.js';
import { DomainError } from '../../services/platform/errors.js';
import type { OperationDeps } from '../../api/operation.js';

// One presentation rule (issue 23, point 8; docs/architecture.md): every operation declares what
// it answers, a single resource is `data` itself (wrapped only where the contract says so, each
// exception named in docs/architecture.md), and every query boolean reads true, false, 1 or 0.

const operations = [...customerOperations, ...operatorOperations];
const architecture = fs.readFileSync(path.resolve(import.meta.dirname, '../../docs/architecture.md'), 'utf8');
const KINDS = ['resource', 'list', 'outcome'];

test('every operation declares its answer’s kind', () => {
  assert.ok(operations.length > 100);
  for (const op of operations) assert.ok(KINDS.includes(op.output.kind), `${op.name}: output.kind ${op.output.kind}`);
});

test('every single-resource answer is the resource itself, unless the contract spells out a wrapper', () => {
  const wrapped = operations
    .filter((op) => op.output.kind === 'resource' && !op.output.contract)
    .map((op) => [op.name, wrappedResourceAt(op.output.schema)])
    .filter(([, at]) => at !== undefined);
  assert.deepEqual(wrapped, []);
  // The REST door puts that schema under data as it is (the data envelope answers it bare).
  for (const op of operations.filter((o) => o.output.kind === 'resource')) {
    const route = restRoute(op, {} as OperationDeps);
    // The engine's native run envelopes are bare too (/api/engine).
    const bare = op.envelope === 'data' || op.envelope === 'engine';
    assert.deepEqual(route.response.schema, bare ? op.output.schema : successOf(op.output.schema), op.name);
  }
});

test('a read of one addressed resource (GET …/{id}) is declared a resource', () => {
  const reads = operations.filter((op) => op.method === 'GET' && /\}$/.test(op.path));
  assert.ok(reads.some((op) => op.name === 'get_order'));
  assert.deepEqual(
    reads.filter((op) => op.output.kind !== 'resource').map((op) => op.name),
    [],
  );
});

test('no answer but a list holds a lone resource under a key (an import, an order, a message)', () => {
  const lone = operations.filter((op) => {
    const props = Object.keys((op.output.schema.properties ?? {}) as object);
    return op.output.kind !== 'list' && !op.output.contract && props.length === 1 && wrappedResourceAt(op.output.schema) !== undefined;
  });
  assert.deepEqual(
    lone.map((op) => op.name),
    [],
  );
});

test('every shape the contract spells out is a stated exception in docs/architecture.md', () => {
  const exceptions = operations.filter((op) => op.output.contract);
  assert.ok(exceptions.some((op) => op.name === 'get_data_record'));
  for (const op of exceptions) assert.ok(architecture.includes(`\`${op.name}\``), `${op.name} is named in docs/architecture.md`);
});

test('the MCP tool of a resource advertises the resource itself as its output schema (tools/list and the manifest)', () => {
  const manifest = buildManifest([]);
  const outputOf = (name: string) =>
    manifest.tools.find((t) => t.name === name)!.outputSchema as unknown as { properties: Record<string, unknown> };
  for (const name of ['get_order', 'set_order_status', 'send_chat_group_message', 'get_contact_import', 'reset_chat_group_invite_link']) {
    const out = outputOf(name);
    assert.ok('id' in out.properties, `${name}: ${Object.keys(out.properties).join(',')}`);
  }
  assert.ok('group_id' in outputOf('send_chat_group_message').properties);
});

test('defineOperation refuses a single-resource answer wrapped in an object or a list', () => {
  const order = { type: 'object', properties: { id: { type: 'integer' }, status: { type: 'string' } } };
  const op = (output: Omit<OperationOutput, 'status' | 'description'>) => () =>
    defineOperation({
      name: 'probe',
      method: 'GET',
      path: '/probe/{id}',
      tag: 't',
      summary: 's',
      auth: 'public',
      output: { status: 200, description: 'd', ...output },
      handler: async () => null,
    });
  const refused = (schema: JsonSchema) => assert.throws(op({ kind: 'resource', schema }), /must be the resource itself/);
  refused({ type: 'object', properties: { order } });
  refused({ type: 'object', properties: { messages: { type: 'array', items: { type: 'object' } } } });
  refused({ type: 'object', properties: { invite_link: { type: 'string' }, group: order } });
  refused({ type: 'array', items: order });
  assert.doesNotThrow(op({ kind: 'resource', schema: order }));
  assert.doesNotThrow(op({ kind: 'resource', schema: { type: 'object', properties: { balance: { type: 'string' } } } }));
  assert.doesNotThrow(op({ kind: 'resource', contract: 'Endpoints > X: {order}', schema: { type: 'object', properties: { order } } }));
  assert.doesNotThrow(op({ kind: 'list', schema: { type: 'object', properties: { orders: { type: 'array', items: order } } } }));
});

test('every query boolean of every operation takes the one boolean schema', () => {
  const booleans: string[] = [];
  for (const op of operations) {
    for (const [key, field] of Object.entries((op.query?.properties ?? {}) as Record<string, JsonSchema>)) {
      assert.notEqual(field.type, 'boolean', `${op.name}: query ${key} is a bare boolean`);
      if (field['x-query-boolean']) {
        assert.deepEqual(field.enum, [...QUERY_BOOLEAN_VALUES], `${op.name}: ${key}`);
        booleans.push(`${op.name}.${key}`);
      }
    }
  }
  for (const known of ['list_data_records.with_count', 'list_inventory.tracked_only']) assert.ok(booleans.includes(known), known);
});

test('a query boolean reads true, false, 1 and 0 (and real booleans from MCP); anything else is 422 naming it', () => {
  const schema = withQueryBooleans({ type: 'object', properties: { with_count: { type: 'boolean' }, q: { type: 'string' } } });
  const read = (v: unknown) => validateQuery<{ with_count?: boolean }>(schema, { with_count: v }).with_count;
  for (const v of ['true', '1', true]) assert.equal(read(v), true, String(v));
  for (const v of ['false', '0', false]) assert.equal(read(v), false, String(v));
  assert.deepEqual(validateQuery(schema, { q: 'x' }), { q: 'x' }, 'absent stays absent');
  for (const v of ['yes', 'TRUE', '2', '', 1, ['1', '0']])
    assert.throws(
      () => read(v),
      (err: unknown) => err instanceof DomainError && Object.keys(err.detail.errors ?? {}).includes('with_count'),
      JSON.stringify(v),
    );
});
