import { test } from 'node:test';
import assert from 'node:assert/strict';
import { customerOperations, operatorOperations } from '../../api/operations.js';
import type { Operation } from '../../api/operation.js';
import { makeAjv, toFieldErrors } from '../../services/platform/validation.js';
import { DATE_TIME_PATTERN, LENIENT_DATE_TIME, RANGE_BOUND_PATTERN } from '../../domain/platform/date-time.js';
import { NOT_BLANK, TRIM_WHITESPACE } from '../../domain/platform/text-patterns.js';

// What the server refuses for a reason a schema can state is stated in the operation's schema, so
// the OpenAPI document (and every client or fuzzer generating from it) admits only what is accepted.
// Each case here was a schema-valid request answered 422 by a rule behind the schema (Schemathesis,
// issue 23 point 9). Checked with the schema alone, as a generator sees it: no rule runs.

const ajv = makeAjv({ allErrors: true, strict: false, verbose: true });
const byName = new Map([...customerOperations, ...operatorOperations].map((op) => [op.name, op]));

function schemaProblems(name: string, part: 'body' | 'query', value: unknown): Record<string, string[]> {
  const op = byName.get(name) as (Operation & { body?: object; query?: object }) | undefined;
  assert.ok(op, name);
  const schema = op[part];
  assert.ok(schema, `${name} has a ${part} schema`);
  const validate = ajv.compile(schema);
  return validate(value) ? {} : toFieldErrors(validate.errors);
}
const refused = (name: string, value: unknown, part: 'body' | 'query' = 'body') =>
  assert.notDeepEqual(schemaProblems(name, part, value), {}, `${name} admits ${JSON.stringify(value)}`);
const admitted = (name: string, value: unknown, part: 'body' | 'query' = 'body') =>
  assert.deepEqual(schemaProblems(name, part, value), {}, `${name} refuses ${JSON.stringify(value)}`);

test('a chat group: a subject that is not blank; an update names something to change', () => {
  refused('create_chat_group', { subject: '' });
  refused('create_chat_group', { subject: ' \u3000\ufeff\t' });
  admitted('create_chat_group', { subject: '\u001c' }, 'body'); // trim keeps U+001C, so the service does too
  admitted('create_chat_group', { subject: ' Team ' });
  refused('update_chat_group', {});
  admitted('update_chat_group', { description: '' });
});

test('a group message is one kind of content, said in one sentence', () => {
  for (const body of [
    {},
    { message: '  ' },
    { message: ' ', body: 'hi' },
    { template: 'hello', media_type: 'audio', media_url: '' },
    { template: 'hello', message: 'hi' },
    { media_url: 'https://x.test/a.png' },
    { media_url: 'ftp://x.test/a.png', media_type: 'image' },
    { message: 'hi', components: [] },
    { template: { name: 'hello', components: [{ type: 'body', parameters: [{ type: 'text' }] }] } },
  ])
    refused('send_chat_group_message', body);
  assert.deepEqual(
    schemaProblems('send_chat_group_message', 'body', { template: 'x', media_url: 'https://x.test/a', media_type: 'image' }),
    {
      message: [
        'Send one kind of content: a message (or body), media_url with media_type (message as the caption), or a template with its language and components.',
      ],
    },
  );
  for (const body of [
    { message: 'hi' },
    { body: 'hi' },
    { message: 'hi', body: 'ignored' },
    { media_url: ' HTTPS://x.test/a.png ', media_type: 'image', message: 'caption' },
    { template: 'hello', language: 'en', components: [{ type: 'body', parameters: [{ type: 'text', text: 'x' }, { type: 'currency' }] }] },
    { template: { name: 'hello', language: 'en_US' } },
  ])
    admitted('send_chat_group_message', body);
});

test('a shop link goes to one recipient at most; the refusal is filed under to', () => {
  assert.deepEqual(schemaProblems('create_shop_link', 'body', { to: '+255700000001', conversation_id: 'whatsapp:1:+255700000001' }), {
    to: ['Send either conversation_id or to, not both.'],
  });
  admitted('create_shop_link', { to: '+255700000001' });
  admitted('create_shop_link', { conversation_id: 'whatsapp:1:+255700000001' });
});

test('free-form values hold no NUL at any depth: channel config and product batch rows', () => {
  refused('admin_add_channel', {
    channel_type: 'whatsapp',
    provider: 'whatsapp-cloud',
    code: 'c1',
    config: { a: { b: { 'x\u0000y': 1 } } },
  });
  admitted('admin_add_channel', { channel_type: 'whatsapp', provider: 'whatsapp-cloud', code: 'c1', config: { a: { b: { xy: 1 } } } });
  refused('sync_products', { products: [{ sku: 'A', more: { 'k\u0000': 1 } }] });
  admitted('sync_products', { products: [{ sku: 'A' }, 7, []] });
});

test('URLs the service calls are absolute http(s) in every schema; a column names a stored type only when unknown', () => {
  for (const url of ['\udbcf\ude86\u009a', 'ftp://x.test/feed.xml', '/feed.xml']) refused('update_catalogue_feed', { url });
  admitted('update_catalogue_feed', { url: 'https://feeds.example.com/products.xml' });
  refused('admin_add_data_column', { key: 'born', type: 'date', stored_type: 'legacy' });
  refused('admin_add_data_column', { key: 'born', type: 'unknown', stored_type: '' });
  admitted('admin_add_data_column', { key: 'born', type: 'unknown', stored_type: 'legacy_date' });
});

test('overview bounds are a date or a date and time', () => {
  refused('get_data_group_overview', { from: '*' }, 'query');
  refused('get_data_group_overview', { from: 'tomorrow' }, 'query');
  admitted('get_data_group_overview', { from: ' 2026-01-01 ', to: '2026-02-01T10:00+03:00' }, 'query');
});

test('stated patterns spell classes out: no \\d or \\s, which other regex engines read more widely', () => {
  for (const pattern of [DATE_TIME_PATTERN, LENIENT_DATE_TIME, RANGE_BOUND_PATTERN, NOT_BLANK, TRIM_WHITESPACE])
    assert.doesNotMatch(pattern, /\\[dDsS]/, pattern);
});
