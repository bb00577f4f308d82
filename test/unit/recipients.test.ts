import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mergeRecipients, splitList, toE164 } from '../../domain/messaging/recipients.js';

test('recipient and recipients merge, split on comma, semicolon and whitespace, drop exact duplicates in order', () => {
  assert.deepEqual(splitList(' 1,2;3 4\n5\t6 ,, '), ['1', '2', '3', '4', '5', '6']);
  assert.deepEqual(mergeRecipients('+255700000001, +255700000002', ['+255700000002;+255700000003', '+255700000001']), [
    '+255700000001',
    '+255700000002',
    '+255700000003',
  ]);
  assert.deepEqual(mergeRecipients(undefined, undefined), []);
  assert.deepEqual(mergeRecipients(' ; ', [' ']), []);
  assert.deepEqual(mergeRecipients('255700000001', ['+255700000001']), ['255700000001', '+255700000001'], 'only exact duplicates collapse');
});

test('E.164 form for providers', () => {
  assert.equal(toE164('+255 700-000-001'), '+255700000001');
  assert.equal(toE164('abc'), null);
  assert.equal(toE164('1'.repeat(16)), null);
});
