import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  normalizePhone,
  deriveName,
  extractCustomFields,
  pickPhone,
  parseSubscribed,
  parseContact,
  RESERVED_FIELDS,
} from '../../domain/contacts/contacts.js';

const ok = (body: Record<string, unknown>) => {
  const r = parseContact(body);
  assert.ok(r.ok, JSON.stringify(!r.ok && r.errors));
  return r.contact;
};
const errorsOf = (body: Record<string, unknown>) => {
  const r = parseContact(body);
  assert.ok(!r.ok, 'expected a validation failure');
  return r.errors;
};

test('phone normalization: non-digits removed, matching country code removed, trunk zero removed only with a country code', () => {
  assert.deepEqual(normalizePhone('+255 712-345 678', '255'), { phoneNumber: '712345678', fullPhoneNumber: '255712345678' });
  assert.deepEqual(normalizePhone('0712 345 678', '255'), { phoneNumber: '712345678', fullPhoneNumber: '255712345678' });
  assert.deepEqual(
    normalizePhone('+255 0712 345678', '255'),
    { phoneNumber: '712345678', fullPhoneNumber: '255712345678' },
    'code then trunk zero',
  );
  assert.deepEqual(
    normalizePhone('(0712) 345.678', ''),
    { phoneNumber: '0712345678', fullPhoneNumber: '0712345678' },
    'no code: trunk zero kept',
  );
  assert.deepEqual(
    normalizePhone('+255712345678', ''),
    { phoneNumber: '255712345678', fullPhoneNumber: '255712345678' },
    'no inference from a leading plus',
  );
  assert.deepEqual(
    normalizePhone('+1 555 0100', '255'),
    { phoneNumber: '15550100', fullPhoneNumber: '25515550100' },
    'a different code is not removed',
  );
  assert.deepEqual(normalizePhone('00712', '255'), { phoneNumber: '0712', fullPhoneNumber: '2550712' }, 'one trunk zero only');
  assert.deepEqual(normalizePhone('n/a', '255'), { phoneNumber: '', fullPhoneNumber: '255' });
});

test('name: name, then NAME, then FIRST_NAME and LAST_NAME joined, then the normalized phone', () => {
  assert.equal(deriveName({ name: ' Ann ', NAME: 'Upper' }, '7'), 'Ann');
  assert.equal(deriveName({ NAME: 'Upper', FIRST_NAME: 'A' }, '7'), 'Upper');
  assert.equal(deriveName({ name: '  ', FIRST_NAME: 'Ann', LAST_NAME: 'Lee' }, '7'), 'Ann Lee');
  assert.equal(deriveName({ LAST_NAME: 'Lee' }, '7'), 'Lee');
  assert.equal(deriveName({ FIRST_NAME: 'Ann', LAST_NAME: '' }, '7'), 'Ann');
  assert.equal(deriveName({}, '712345678'), '712345678');
  assert.equal(deriveName({ FIRST_NAME: 'a'.repeat(100), LAST_NAME: 'b'.repeat(100) }, '7').length, 160, 'joined parts keep the 160 limit');
});

test('custom fields: every non-reserved top-level field; a custom_field_values wrapper is itself a custom key', () => {
  assert.deepEqual(
    [...RESERVED_FIELDS].sort(),
    ['FIRST_NAME', 'LAST_NAME', 'NAME', 'PHONE', '_token', 'country_code', 'is_subscribed', 'name', 'phone_number'].sort(),
  );
  const body = {
    PHONE: '1',
    phone_number: '2',
    country_code: '3',
    name: 'n',
    NAME: 'N',
    FIRST_NAME: 'f',
    LAST_NAME: 'l',
    is_subscribed: true,
    _token: 't',
    city: 'Dar',
    age: 30,
    tags: ['a'],
    custom_field_values: { plan: 'gold' },
    first_name: 'lowercase is not reserved',
  };
  assert.deepEqual(extractCustomFields(body), {
    city: 'Dar',
    age: 30,
    tags: ['a'],
    custom_field_values: { plan: 'gold' },
    first_name: 'lowercase is not reserved',
  });
  assert.deepEqual(extractCustomFields({ PHONE: '1' }), {});
});

test('PHONE wins over phone_number; an empty PHONE falls back to the alias', () => {
  assert.deepEqual(pickPhone({ PHONE: '111', phone_number: '222' }), { field: 'PHONE', value: '111' });
  assert.deepEqual(pickPhone({ phone_number: '222' }), { field: 'phone_number', value: '222' });
  assert.deepEqual(pickPhone({ PHONE: ' ', phone_number: 222 }), { field: 'phone_number', value: '222' });
  assert.equal(pickPhone({}), null);
  assert.equal(ok({ PHONE: '111', phone_number: '222' }).phoneNumber, '111');
});

test('is_subscribed: booleans, 0/1 and their text forms; empty means not sent', () => {
  for (const v of [true, 1, '1', 'true', 'TRUE', 'yes']) assert.equal(parseSubscribed(v), true, String(v));
  for (const v of [false, 0, '0', 'false', 'No']) assert.equal(parseSubscribed(v), false, String(v));
  for (const v of [undefined, null, '', '  ']) assert.equal(parseSubscribed(v), undefined, String(v));
  for (const v of ['maybe', 2, {}, []]) assert.equal(parseSubscribed(v), 'invalid', JSON.stringify(v));
  assert.equal(ok({ PHONE: '1' }).isSubscribed, undefined, 'left to the caller: true on create, kept on update');
});

test('parseContact derives every stored field', () => {
  assert.deepEqual(ok({ PHONE: '+255 0712 345 678', country_code: '+255', FIRST_NAME: 'Ann', is_subscribed: false, city: 'Dar' }), {
    name: 'Ann',
    countryCode: '255',
    phoneNumber: '712345678',
    fullPhoneNumber: '255712345678',
    isSubscribed: false,
    customFieldValues: { city: 'Dar' },
  });
  assert.deepEqual(
    ok({ PHONE: 255712345678, country_code: 255 }),
    {
      name: '712345678',
      countryCode: '255',
      phoneNumber: '712345678',
      fullPhoneNumber: '255712345678',
      isSubscribed: undefined,
      customFieldValues: {},
    },
    'numbers are accepted for phone and code',
  );
});

test('parseContact limits and required fields answer errors keyed by field', () => {
  assert.deepEqual(errorsOf({}), { PHONE: ['The PHONE field is required.'] });
  assert.deepEqual(errorsOf({ PHONE: '', phone_number: null }), { PHONE: ['The PHONE field is required.'] });
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1'.repeat(65) })), ['PHONE']);
  assert.deepEqual(Object.keys(errorsOf({ phone_number: '1'.repeat(65) })), ['phone_number']);
  assert.equal(ok({ PHONE: '1'.repeat(64) }).phoneNumber.length, 64);
  assert.deepEqual(errorsOf({ PHONE: '1', country_code: '123456789' }), {
    country_code: ['The country code may not be greater than 8 characters.'],
  });
  assert.ok(ok({ PHONE: '1', country_code: '12345678' }));
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1', name: 'x'.repeat(161) })), ['name']);
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1', NAME: 'x'.repeat(161) })), ['NAME']);
  assert.equal(ok({ PHONE: '1', name: 'é'.repeat(160) }).name.length, 160, 'limits count characters');
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1', country_code: 'TZ' })), ['country_code']);
  assert.deepEqual(Object.keys(errorsOf({ PHONE: { n: 1 } })), ['PHONE']);
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1', name: ['x'] })), ['name']);
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1', is_subscribed: 'sometimes' })), ['is_subscribed']);
  assert.deepEqual(Object.keys(errorsOf({ PHONE: '1'.repeat(65), name: 'x'.repeat(161), is_subscribed: 'x' })).sort(), [
    'PHONE',
    'is_subscribed',
    'name',
  ]);
});

test('a phone without digits is stored empty (campaign dispatch skips such contacts)', () => {
  const c = ok({ PHONE: 'unknown' });
  assert.equal(c.phoneNumber, '');
  assert.equal(c.name, '');
});
