import { test } from 'node:test';
import assert from 'node:assert/strict';
import { smsSendBody, whatsappSendBody } from '../../services/messaging/send-schemas.js';
import { validateBody } from '../../services/platform/validation.js';
import { DomainError } from '../../services/platform/errors.js';
import { checkRecipients } from '../../domain/messaging/recipients.js';

/** The field problems a body gets from the schema alone ({} when it passes); a recipient is added unless the body names its own. */
function problems(schema: Record<string, unknown>, body: Record<string, unknown>): Record<string, string[]> {
  const withRecipient = 'recipient' in body || 'recipients' in body ? body : { recipient: '255700000001', ...body };
  try {
    validateBody(schema, withRecipient);
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

test('a send names at least one recipient, and a text message its text, in the words the send uses', () => {
  const none = {
    recipient: ['The recipient field is required when recipients is not present.'],
    recipients: ['The recipients field is required when recipient is not present.'],
  };
  assert.deepEqual(problems(smsSendBody, { recipient: ' , ; ', message: 'hi' }), none);
  assert.deepEqual(problems(smsSendBody, { recipients: ['', ' '], message: 'hi' }), none);
  assert.deepEqual(problems(smsSendBody, { recipients: ['', '255700000001'], message: 'hi' }), {});
  assert.deepEqual(problems(whatsappSendBody, { recipient: '', recipients: [] }).recipient, none.recipient);
  assert.deepEqual(problems(whatsappSendBody, { body: 'hi' }), {});
  assert.deepEqual(problems(whatsappSendBody, { template: { name: 'hello', language: 'en' } }), {}, 'a template needs no text');
});

test('the send schemas and checkRecipients agree on the characters a recipient may hold', () => {
  const samples = [
    '255700000001',
    '+255 700 000 001',
    'abc-DEF_1.2',
    '\u001c255',
    '255\u200b700',
    'José',
    '٠١٢',
    '\u00a0255\u3000',
    '25\u007f5',
  ];
  for (const s of samples) {
    const bySchema = Object.keys(problems(smsSendBody, { recipient: s, message: 'hi' })).length === 0;
    const byDomain = Object.keys(checkRecipients(s, undefined).errors).length === 0;
    assert.equal(bySchema, byDomain, `${JSON.stringify(s)}: schema ${bySchema}, send ${byDomain}`);
  }
});
