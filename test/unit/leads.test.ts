import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leadPhone } from '../../services/leads/phones.js';
import { LEAD_STAGES, conversationCustomer, normalEmail, stageMoveRefusal } from '../../domain/leads/index.js';

// The leads family's pure rules (docs/leads.md): a phone number in any common form to one E.164, an
// e-mail matched without case, the stage rules behind reason_required and won_locked.

test('a phone number in any common form is one E.164 (Tanzanian account)', () => {
  const forms = [
    '+255754123456',
    '+255 754 123 456',
    '+255-754-123-456',
    '+255 (0)754 123456',
    '(+255) 754 123 456',
    '255754123456',
    '00255754123456',
    '000255754123456',
    '0754 123 456',
    '0754-123-456',
    '0754.123.456',
    '754123456',
    'tel:+255-754-123-456',
    'wa:255754123456',
  ];
  for (const f of forms) assert.deepEqual(leadPhone(f, 'TZ'), { e164: '+255754123456' }, f);
  // Other countries' numbers stay theirs; the account's country is only the default.
  assert.deepEqual(leadPhone('+254 712 345 678', 'TZ'), { e164: '+254712345678' });
  assert.deepEqual(leadPhone('0044 20 7946 0958', 'TZ'), { e164: '+442079460958' });
  assert.deepEqual(leadPhone('0712 345 678', 'ke'), { e164: '+254712345678' }, 'the region in any case');
});

test('a national number needs a country; what is no phone number is refused', () => {
  assert.match((leadPhone('0754 123 456') as { problem: string }).problem, /national number/);
  assert.deepEqual(leadPhone('+255754123456'), { e164: '+255754123456' }, 'international needs none');
  assert.deepEqual(leadPhone('255754123456'), { e164: '+255754123456' });
  for (const bad of ['', 'abc', '12345', '+255 12', '0754123456x', '+0754123456', '++255754123456', '0754 123 456 789 123 4', '☎'])
    assert.ok('problem' in leadPhone(bad, 'TZ'), bad);
});

test('e-mail is matched trimmed and without case; what is not an address is null', () => {
  assert.equal(normalEmail('  Asha.M+Leads@Example.CO.TZ '), 'asha.m+leads@example.co.tz');
  for (const bad of [
    'asha',
    'asha@',
    '@example.com',
    'asha@example',
    'a b@example.com',
    'asha@@example.com',
    `${'a'.repeat(65)}@example.com`,
  ])
    assert.equal(normalEmail(bad), null, bad);
});

test('a conversation names its customer', () => {
  assert.equal(conversationCustomer('whatsapp:1234567890:+255754123456'), '+255754123456');
  assert.equal(conversationCustomer('messenger:page:psid:42'), 'psid:42');
  assert.equal(conversationCustomer('whatsapp:1234'), null);
  assert.equal(conversationCustomer('whatsapp:1234: '), null);
});

test('stages: free moves, a reason into lost or unqualified, a reason out of won', () => {
  assert.deepEqual([...LEAD_STAGES], ['new', 'contacted', 'qualified', 'opportunity', 'won', 'lost', 'unqualified']);
  assert.equal(stageMoveRefusal('new', 'won', undefined), null);
  assert.equal(stageMoveRefusal('opportunity', 'new', undefined), null, 'backwards is allowed');
  assert.equal(stageMoveRefusal('qualified', 'lost', undefined)?.reason, 'reason_required');
  assert.equal(stageMoveRefusal('qualified', 'unqualified', '  ')?.reason, 'reason_required');
  assert.equal(stageMoveRefusal('qualified', 'lost', 'chose a competitor'), null);
  assert.equal(stageMoveRefusal('won', 'contacted', undefined)?.reason, 'won_locked');
  assert.equal(stageMoveRefusal('won', 'lost', undefined)?.reason, 'won_locked');
  assert.equal(stageMoveRefusal('won', 'opportunity', 'the order was cancelled'), null);
  assert.equal(stageMoveRefusal('won', 'won', undefined), null, 'staying changes nothing');
});
