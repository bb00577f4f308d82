import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { checkTemplateComponents, sendParameterCounts, templateStatusOf } from '../../domain/templates/index.js';
import { parseTemplateWebhook } from '../../providers/whatsapp-cloud/templates.js';

// The templates family's pure rules (docs/templates.md): Meta's form rules on components, the
// parameters a send gives, the status map, and the status-update webhook as our adapter reads it.

const body = (text: string, example?: unknown) => ({ type: 'BODY', text, ...(example ? { example: { body_text: example } } : {}) });

test('components: a good template gives its parameter counts; each broken rule names its field', () => {
  const ok = checkTemplateComponents('UTILITY', [
    { type: 'HEADER', format: 'IMAGE', example: { header_handle: ['4::aW1h'] } },
    body('Hi {{1}}, order {{2}} and {{1}} again.', [['Ann', 'A-1']]),
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'QUICK_REPLY', text: 'Yes' },
        { type: 'QUICK_REPLY', text: 'No' },
        { type: 'URL', text: 'Go', url: 'https://x.tz' },
      ],
    },
  ]);
  assert.deepEqual(ok, { errors: {}, shape: { headerParams: 1, bodyParams: 2 } });

  const field = (components: unknown[], category: 'UTILITY' | 'MARKETING' | 'AUTHENTICATION' = 'UTILITY') =>
    Object.keys(checkTemplateComponents(category, components).errors);
  assert.deepEqual(field([{ type: 'FOOTER', text: 'x' }]), ['components']);
  assert.deepEqual(field([body('Hi {{name}} x', [['a']])]), ['components.0.text']);
  assert.deepEqual(field([body('Hi {{1}} {{2}} x', [['a']])]), ['components.0.example.body_text']);
  assert.deepEqual(field([body('Hi there', [['a']])]), ['components.0.example.body_text']);
  assert.deepEqual(field([body('Hi {{1}}', [['a']])]), ['components.0.text'], 'a trailing placeholder');
  assert.deepEqual(field([body('x'), { type: 'HEADER', format: 'TEXT', text: '{{1}} {{2}}' }]), ['components.1.text']);
  assert.deepEqual(field([body('x'), { type: 'HEADER', format: 'VIDEO' }]), ['components.1.example.header_handle']);
  const buttons = (bs: unknown[]) => field([body('x'), { type: 'BUTTONS', buttons: bs }]);
  assert.deepEqual(buttons(Array.from({ length: 11 }, () => ({ type: 'QUICK_REPLY', text: 'a' }))), ['components.1.buttons']);
  assert.deepEqual(
    buttons([
      { type: 'URL', text: 'a', url: 'https://x' },
      { type: 'URL', text: 'b', url: 'https://y' },
      { type: 'URL', text: 'c', url: 'https://z' },
    ]),
    ['components.1.buttons'],
  );
  assert.deepEqual(
    buttons([
      { type: 'QUICK_REPLY', text: 'a' },
      { type: 'URL', text: 'b', url: 'https://y' },
      { type: 'QUICK_REPLY', text: 'c' },
    ]),
    ['components.1.buttons'],
    'interleaved',
  );
  assert.deepEqual(buttons([{ type: 'URL', text: 'b', url: 'https://y/{{1}}' }]), ['components.1.buttons.0.example']);
  assert.deepEqual(buttons([{ type: 'OTP', otp_type: 'COPY_CODE' }]), ['components.1.buttons.0.type']);
  assert.deepEqual(field([body('x'), body('y')]), ['components.1.type']);
});

test('a send’s parameters; Meta’s statuses in ours', () => {
  assert.deepEqual(
    sendParameterCounts([
      { type: 'header', parameters: [{ type: 'image' }] },
      { type: 'BODY', parameters: [{}, {}] },
      { type: 'button', parameters: [{}] },
    ]),
    { headerParams: 1, bodyParams: 2 },
  );
  assert.deepEqual(
    ['PENDING', 'APPROVED', 'FLAGGED', 'REJECTED', 'PAUSED', 'DISABLED', 'PENDING_DELETION', 'LOCKED'].map(templateStatusOf),
    ['pending', 'approved', 'approved', 'rejected', 'paused', 'disabled', 'deleted', null],
  );
});

test('the status-update webhook: the id kept as text, NONE as no reason, a pause’s title as its reason, other fields ignored', () => {
  const raw = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA1',
        changes: [
          {
            field: 'message_template_status_update',
            value: {
              event: 'APPROVED',
              message_template_id: 1234567890123,
              message_template_name: 'a',
              message_template_language: 'sw',
              reason: 'NONE',
            },
          },
          {
            field: 'message_template_status_update',
            value: { event: 'PAUSED', message_template_id: 9, reason: 'NONE', other_info: { title: 'FIRST_PAUSE' } },
          },
          { field: 'messages', value: { statuses: [] } },
        ],
      },
    ],
  });
  const req = {
    url: '/providers/whatsapp/webhook',
    headers: { 'x-hub-signature-256': `sha256=${createHmac('sha256', 's').update(raw).digest('hex')}` },
    rawBody: Buffer.from(raw),
  };
  assert.deepEqual(parseTemplateWebhook(req), [
    { businessAccountId: 'WABA1', providerTemplateId: '1234567890123', name: 'a', language: 'sw', event: 'APPROVED', reason: null },
    { businessAccountId: 'WABA1', providerTemplateId: '9', name: null, language: null, event: 'PAUSED', reason: 'FIRST_PAUSE' },
  ]);
  assert.deepEqual(parseTemplateWebhook({ ...req, rawBody: Buffer.from('{"entry":[]}') }), []);
});
