import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalJson, checkDefinition, eventsOf, renderText, splitEvent } from '../../domain/flows/index.js';

// The pure rules of flows (docs/flows.md): the definition's strict check, the split, the text.

const ok = (states: unknown[], initial = 'a') => checkDefinition({ initial_state: initial, states });
const fields = (r: ReturnType<typeof checkDefinition>) => Object.keys(r.errors).sort();

test('a definition that holds comes back as stored; one that does not names each problem', () => {
  const good = ok([
    { name: 'a', type: 'wait_for_reply', properties: { body: 'Yes?' }, transitions: [{ event: 'reply', next: 'b' }] },
    {
      name: 'b',
      type: 'split',
      properties: { cases: [{ event: 'yes', match: 'equals', value: 'yes' }] },
      transitions: [{ event: 'no_match', next: 'a' }],
    },
  ]);
  assert.deepEqual(good.errors, {});
  assert.equal(good.definition?.states.length, 2);
  // A loop through a wait is allowed; one without is not.
  const spin = ok([
    {
      name: 'a',
      type: 'split',
      properties: { cases: [{ event: 'x', match: 'contains', value: 'x' }] },
      transitions: [{ event: 'no_match', next: 'b' }],
    },
    { name: 'b', type: 'send_message', properties: { body: 'again' }, transitions: [{ event: 'sent', next: 'a' }] },
  ]);
  assert.deepEqual(fields(spin), ['definition.states']);
  assert.match(spin.errors['definition.states']![0]!, /a → b → a/);
  assert.deepEqual(fields(ok([{ name: 'a', type: 'split', properties: { cases: [{ event: 'x', match: 'regex', value: '(' }] } }])), [
    'definition.states.0.properties.cases.0.value',
  ]);
  assert.deepEqual(fields(ok([{ name: 'a', type: 'send_message', properties: { body: 'x', template: { name: 't', language: 'en' } } }])), [
    'definition.states.0.properties',
  ]);
  assert.deepEqual(fields(checkDefinition({ initial_state: 'a', states: [{ name: 'a', type: 'end' }], extra: 1 })), ['definition.extra']);
  assert.deepEqual(eventsOf({ type: 'split', properties: { cases: [{ event: 'yes' }] } }), ['no_match', 'yes']);
});

test('a split reads the reply without case or surrounding spaces; the text fills what it names', () => {
  const cases = [
    { event: 'yes', match: 'any_of' as const, value: ['yes', 'y'] },
    { event: 'price', match: 'contains' as const, value: 'price' },
    { event: 'code', match: 'regex' as const, value: '^\\d{4}$' },
  ];
  assert.equal(splitEvent(cases, ' YES '), 'yes');
  assert.equal(splitEvent(cases, 'what is the Price?'), 'price');
  assert.equal(splitEvent(cases, '1234'), 'code');
  assert.equal(splitEvent(cases, 'no'), 'no_match');
  const ctx = {
    flow: { data: { name: 'Amina', nested: { x: 1 } } },
    contact: { phone: '+255700000001' },
    widgets: { ask: { body: 'yes' } },
  };
  assert.equal(
    renderText('Hi {{flow.data.name}} ({{contact.phone}}): {{widgets.ask.body}}{{ flow.data.nope }}{{flow.data.nested}}', ctx),
    'Hi Amina (+255700000001): yes',
  );
  assert.equal(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null }), '{"a":null,"b":[1,{"c":2,"d":1}]}');
});
