import { test } from 'node:test';
import assert from 'node:assert/strict';
import { smsSendBody, whatsappSendBody } from '../../services/messaging/send-schemas.js';
import { validateBody } from '../../services/platform/validation.js';
import { DomainError } from '../../services/platform/errors.js';

/** The field problems a body gets from the schema alone ({} when it passes). */
function problems(schema: Record<string, unknown>, body: Record<string, unknown>): Record<string, string[]> {
  try {
    validateBody(schema, body);
    return {};
  } catch (err) {
    assert.ok(err instanceof DomainError);
    return err.detail.errors ?? {};
  }
}
const buttons = (n: number) => ({
  type: 'button',
  body: { text: 'Pick one' },
  action: { buttons: Array.from({ length: n }, (_, i) => ({ type: 'reply', reply: { id: `b${i}`, title: `Option ${i}` } })) },
});

test('SMS message types in any case and spacing; others refused on the field they came from', () => {
  assert.deepEqual(problems(smsSendBody, { message_type: ' SMS ' }), {});
  assert.deepEqual(problems(smsSendBody, { message_type: '' }), {});
  assert.deepEqual(problems(smsSendBody, { message_type: 'fax' }), {
    message_type: ['The message type must be one of plain, text, sms or whatsapp.'],
  });
  assert.deepEqual(Object.keys(problems(smsSendBody, { type: 'fax' })), ['type']);
  assert.deepEqual(problems(smsSendBody, { message_type: 'plain', type: 'fax' }), {}, 'type is an alias read only without message_type');
});

test('chat payloads that may not be combined are refused on the field, worded as the send words them', () => {
  assert.deepEqual(problems(whatsappSendBody, { reaction: { emoji: '👍' }, message: 'hi' }), {
    message: ['A reaction cannot carry text.'],
  });
  assert.deepEqual(problems(whatsappSendBody, { message_type: 'reaction', reaction: { emoji: '👍' }, message: 'hi' }), {
    message: ['A reaction cannot carry text.'],
  });
  assert.deepEqual(problems(whatsappSendBody, { template: { name: 'x' }, media_url: 'https://e.com/a.jpg' }), {
    media_url: ['A template cannot be combined with media_url.'],
  });
  assert.deepEqual(problems(whatsappSendBody, { interactive: buttons(1), media_url: 'https://e.com/a.jpg' }), {
    media_url: ['An interactive payload cannot be combined with media_url.'],
  });
});

test('chat message types, kinds that need their payload, and the interactive and template outlines', () => {
  assert.deepEqual(problems(whatsappSendBody, { message_type: ' Template ', template: { name: 'x' } }), {});
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { message_type: 'fax' })), ['message_type']);
  assert.deepEqual(problems(whatsappSendBody, { message_type: 'interactive' }), { interactive: ['The interactive field is required.'] });
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { message_type: 'text' })).sort(), ['body', 'message']);
  assert.deepEqual(problems(whatsappSendBody, { interactive: buttons(3) }), {});
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { interactive: buttons(4) })), ['interactive.action.buttons']);
  const long = buttons(1);
  long.action.buttons[0].reply.title = 't'.repeat(21);
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { interactive: long })), ['interactive.action.buttons.0.reply.title']);
  const list = {
    type: 'list',
    body: { text: 'Menu' },
    action: { button: 'Open', sections: [{ rows: [{ id: 'r1', title: 'r'.repeat(25) }] }] },
  };
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { interactive: list })), ['interactive.action.sections.0.rows.0.title']);
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { interactive: { type: 'carousel' } })), ['interactive.type']);
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { template: { name: 'n'.repeat(192) } })), ['template.name']);
  const component = { type: 'body', parameters: [{ type: 'text' }] };
  assert.deepEqual(Object.keys(problems(whatsappSendBody, { template: { name: 'x', components: [component] } })), [
    'template.components.0.parameters.0.text',
  ]);
});
