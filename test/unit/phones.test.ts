import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NATIONAL_WITHOUT_REGION, NOT_A_PHONE_NUMBER, parseRecipient, toE164 } from '../../services/platform/phones.js';

// Message recipients to E.164 (services/platform/phones.ts): international forms are kept, a
// national number is read only with a known region, and what can never be a number is refused.

test('international forms become E.164: with or without the plus, formatting characters dropped', () => {
  assert.equal(toE164('+255 700-000-001'), '+255700000001');
  assert.equal(toE164('255712345678'), '+255712345678', 'country code first, no plus');
  assert.equal(toE164('+1 (650) 555.1234'), '+16505551234');
  assert.equal(toE164(' +447911123456 '), '+447911123456');
  assert.equal(toE164('+80012345678'), '+80012345678', 'a non-geographic calling code');
  // The numbering plan inside a country is the provider's to judge (its refusal is stored on the record).
  assert.equal(toE164('+2557001114011'), '+2557001114011');
});

test('a national number needs a region: without one it is refused with its own reason, never +0…', () => {
  for (const national of ['0712345678', '0712 345 678', '071-234-5678']) {
    assert.deepEqual(parseRecipient(national), { problem: NATIONAL_WITHOUT_REGION }, national);
    assert.equal(toE164(national), null, national);
  }
  assert.equal(toE164('0712345678', 'TZ'), '+255712345678');
  assert.equal(toE164('0712 345 678', 'KE'), '+254712345678');
  assert.equal(toE164('07911 123456', 'GB'), '+447911123456');
  assert.deepEqual(parseRecipient('0712', 'TZ'), { problem: NOT_A_PHONE_NUMBER }, 'too short for the region it is read in');
});

test('what can never be a phone number is refused', () => {
  for (const bad of [
    'abc',
    'INFO',
    '15555',
    '1'.repeat(16),
    '+0712345678',
    '+999123456',
    '+210123456',
    '++255712345678',
    '2557123x5678',
    '',
  ])
    assert.deepEqual(parseRecipient(bad), { problem: NOT_A_PHONE_NUMBER }, JSON.stringify(bad));
});

test('the calling-code memo answers per number, not per first digits seen', () => {
  // 1 (NANP) and 12 share a first digit; 21x has unassigned codes beside assigned ones (212 Morocco).
  assert.equal(toE164('+212612345678'), '+212612345678');
  assert.equal(toE164('+210123456'), null);
  assert.equal(toE164('+12125551234'), '+12125551234');
  assert.equal(toE164('+210123457'), null);
});
