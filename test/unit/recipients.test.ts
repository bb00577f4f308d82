import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkRecipients,
  mergeRecipients,
  splitList,
  MAX_RECIPIENTS_PER_REQUEST,
  RECIPIENT_MAX_LENGTH,
} from '../../domain/messaging/recipients.js';

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

test('every token is checked after splitting: length, unprintable characters, and the per-request cap', () => {
  const long = '1'.repeat(RECIPIENT_MAX_LENGTH + 1);
  assert.deepEqual(Object.keys(checkRecipients(`+255700000001,${long}`, undefined).errors), ['recipient']);
  assert.deepEqual(Object.keys(checkRecipients(undefined, ['+255700000001', `+255700000002 ${long}`]).errors), ['recipients.1']);
  assert.deepEqual(checkRecipients('1'.repeat(RECIPIENT_MAX_LENGTH), undefined).errors, {}, 'exactly the limit is fine');
  for (const bad of ['+2557\u0000001', '+2557\u200b001', '+2557\ud800001', '+2557\u202e001'])
    assert.ok(checkRecipients(undefined, [bad]).errors['recipients.0'], JSON.stringify(bad));
  assert.deepEqual(checkRecipients('not-a-number', undefined).errors, {}, 'printable non-numbers become failed records, not 422');

  const numbers = (n: number) => Array.from({ length: n }, (_, i) => `+2557${String(i).padStart(8, '0')}`);
  const atCap = checkRecipients(undefined, numbers(MAX_RECIPIENTS_PER_REQUEST));
  assert.deepEqual([atCap.recipients.length, atCap.errors], [MAX_RECIPIENTS_PER_REQUEST, {}]);
  const packed = numbers(MAX_RECIPIENTS_PER_REQUEST + 1);
  const over = checkRecipients(packed.slice(0, 300).join(' '), [packed.slice(300).join(';')]);
  assert.ok(over.errors.recipients, 'the cap counts distinct numbers across both fields');
  assert.deepEqual(
    checkRecipients(undefined, [...numbers(MAX_RECIPIENTS_PER_REQUEST), '+255700000000']).errors,
    {},
    'duplicates do not count',
  );
});
