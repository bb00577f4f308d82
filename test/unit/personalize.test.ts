import { test } from 'node:test';
import assert from 'node:assert/strict';
import { personalize, hasPlaceholders, type PersonalizeContact } from '../../domain/campaigns/personalize.js';

const ann: PersonalizeContact = {
  name: 'Ann Lee',
  countryCode: '255',
  phoneNumber: '712345678',
  fullPhoneNumber: '255712345678',
  customFieldValues: { city: 'Dar', 'plan type': 'gold', n: 7, vip: true, nil: null, obj: { a: 1 } },
};

test('standard variables', () => {
  assert.equal(
    personalize('Hi {{name}}, {{phone}} / {{phone_number}} / {{country_code}}', ann),
    'Hi Ann Lee, +255712345678 / 712345678 / 255',
  );
  assert.equal(personalize('{{ name }}{{NAME}}', ann), 'Ann LeeAnn Lee', 'spaces inside braces and case are tolerated');
});

test('custom fields: strings, numbers, booleans, objects; missing and null are empty', () => {
  assert.equal(personalize('{{cf:city}} {{cf:n}} {{cf:vip}} {{cf:obj}} {{ cf:plan type }}', ann), 'Dar 7 true {"a":1} gold');
  assert.equal(personalize('[{{cf:missing}}][{{cf:nil}}][{{cf:}}]', ann), '[][][]');
  assert.equal(personalize('[{{cf:city}}]', { ...ann, customFieldValues: null }), '[]');
});

test('unknown variables become empty; text that is not a placeholder stays', () => {
  assert.equal(personalize('a{{unknown}}b{{}}c', ann), 'abc');
  assert.equal(personalize('{single} {{ unclosed', ann), '{single} {{ unclosed');
  assert.equal(personalize('{{name}}', { ...ann, name: null, fullPhoneNumber: '' }), '');
  assert.equal(personalize('{{phone}}', { ...ann, fullPhoneNumber: null }), '');
  assert.equal(personalize('no variables', ann), 'no variables');
});

test('hasPlaceholders', () => {
  assert.equal(hasPlaceholders('Hi {{name}}'), true);
  assert.equal(hasPlaceholders('Hi {name}'), false);
});
