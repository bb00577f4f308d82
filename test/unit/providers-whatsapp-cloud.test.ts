import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWhatsAppCloud } from '../../providers/whatsapp-cloud/index.js';
import { signMeta, verifyMetaSignature } from '../../providers/whatsapp-cloud/signature.js';
import { mapWhatsAppStatus } from '../../providers/whatsapp-cloud/status.js';
import { MalformedWebhook, type WebhookRequest } from '../../providers/types.js';
import { prepareWhatsAppMessage } from '../../domain/messaging/whatsapp-message.js';

// The WhatsApp Cloud API adapter against Meta's documented webhook shapes (webhooks/reference/messages).

const SECRET = 'test-app-secret';
const wa = createWhatsAppCloud({
  baseUrl: 'http://127.0.0.1:9/whatsapp/v21.0',
  accessToken: 'token',
  appSecret: SECRET,
  verifyToken: 'verify-me',
  timeoutMs: 500,
});
const post = wa.webhooks.find((w) => w.method === 'POST')!;
const get = wa.webhooks.find((w) => w.method === 'GET')!;
const WAMID = 'wamid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA';

function signed(payload: unknown): WebhookRequest {
  const raw = JSON.stringify(payload);
  return { url: '/providers/whatsapp/webhook', rawBody: Buffer.from(raw), headers: { 'x-hub-signature-256': signMeta(SECRET, raw) } };
}
const envelope = (value: Record<string, unknown>) => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: '15550783881', phone_number_id: '106540352242922' },
            ...value,
          },
        },
      ],
    },
  ],
});

test('X-Hub-Signature-256 over the exact bytes: ok, tampered, wrong secret, malformed header', () => {
  const req = signed(envelope({ statuses: [] }));
  assert.ok(wa.verifySignature(req));
  const header = req.headers['x-hub-signature-256'] as string;
  assert.ok(verifyMetaSignature(SECRET, req.rawBody, `sha256=${header.slice(7).toUpperCase()}`), 'hex case does not matter');
  assert.ok(!wa.verifySignature({ ...req, rawBody: Buffer.from(req.rawBody.toString().replace('[]', '[ ]')) }), 're-serialised body');
  assert.ok(!verifyMetaSignature('other-secret', req.rawBody, header));
  assert.ok(!verifyMetaSignature(SECRET, req.rawBody, header.slice(7)), 'without the sha256= prefix');
  assert.ok(!wa.verifySignature({ ...req, headers: {} }));
});

test('statuses become status updates keyed by the wamid; a failure carries Meta’s details and code', () => {
  const payload = envelope({
    statuses: [
      {
        id: WAMID,
        status: 'delivered',
        timestamp: '1750263773',
        recipient_id: '16505551234',
        conversation: { id: 'CONVERSATION_ID', origin: { type: 'service' } },
        pricing: { billable: true, pricing_model: 'PMP', category: 'service' },
      },
      {
        id: 'wamid.FAILED',
        status: 'failed',
        timestamp: '1750263774',
        recipient_id: '16505551234',
        errors: [
          {
            code: 131047,
            title: 'Re-engagement message',
            message: 'Re-engagement message',
            error_data: {
              details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
            },
            href: 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/',
          },
        ],
      },
      { id: 'wamid.DELETED', status: 'deleted', timestamp: '1750263775', recipient_id: '16505551234' },
      { status: 'read' },
    ],
  });
  assert.deepEqual(post.parse!(signed(payload)), [
    { type: 'status', providerMessageId: WAMID, status: 'delivered' },
    {
      type: 'status',
      providerMessageId: 'wamid.FAILED',
      status: 'failed',
      errorMessage:
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number. (provider code 131047)',
    },
  ]);
  const bare = envelope({ statuses: [{ id: 'wamid.X', status: 'failed' }] });
  assert.equal((post.parse!(signed(bare))[0] as { errorMessage: string }).errorMessage, 'Delivery failed (provider code unknown)');
});

test('inbound messages: text, media with caption, a reaction and a button reply in context', () => {
  const payload = envelope({
    contacts: [{ profile: { name: 'Kerry Fisher' }, wa_id: '16315551234' }],
    messages: [
      { from: '16315551234', id: 'wamid.T', timestamp: '1603059201', text: { body: 'Hello this is an answer' }, type: 'text' },
      {
        from: '16315551234',
        id: 'wamid.I',
        timestamp: '1603059202',
        type: 'image',
        image: { caption: 'This is a caption', mime_type: 'image/jpeg', sha256: 'abc', id: '2754859441498128' },
      },
      { from: '16315551234', id: 'wamid.R', timestamp: '1603059203', type: 'reaction', reaction: { message_id: WAMID, emoji: '👍' } },
      {
        context: { from: '15550783881', id: WAMID },
        from: '16315551234',
        id: 'wamid.B',
        timestamp: '1603059204',
        type: 'interactive',
        interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } },
      },
    ],
  });
  const base = { type: 'inbound', channelType: 'whatsapp', businessNumber: { phoneNumberId: '106540352242922' }, from: '16315551234' };
  assert.deepEqual(post.parse!(signed(payload)), [
    { ...base, body: 'Hello this is an answer', providerMessageId: 'wamid.T', mediaUrl: null, mediaType: null, metadata: { type: 'text' } },
    { ...base, body: 'This is a caption', providerMessageId: 'wamid.I', mediaUrl: null, mediaType: 'image', metadata: { type: 'image' } },
    {
      ...base,
      body: '[reaction]',
      providerMessageId: 'wamid.R',
      mediaUrl: null,
      mediaType: null,
      metadata: { type: 'reaction', reaction: { message_id: WAMID, emoji: '👍' } },
    },
    {
      ...base,
      body: '[interactive]',
      providerMessageId: 'wamid.B',
      mediaUrl: null,
      mediaType: null,
      metadata: {
        type: 'interactive',
        in_reply_to: WAMID,
        interactive: { type: 'button_reply', button_reply: { id: 'yes', title: 'Yes' } },
      },
    },
  ]);
});

test('a body that is not JSON is malformed; an envelope without changes yields nothing', () => {
  const raw = '{"object":';
  assert.throws(
    () => post.parse!({ url: '/providers/whatsapp/webhook', rawBody: Buffer.from(raw), headers: {} }),
    (e) => e instanceof MalformedWebhook && e.message === 'The request body is not valid JSON.',
  );
  // Bytes that are not UTF-8 are refused, never read as replacement characters in a customer's text.
  const latin1 = Buffer.concat([
    Buffer.from('{"entry":[{"changes":[{"value":{"messages":[{"text":{"body":"caf'),
    Buffer.from([0xe9]),
    Buffer.from('"}}]}}]}]}'),
  ]);
  assert.throws(
    () => post.parse!({ url: '/providers/whatsapp/webhook', rawBody: latin1, headers: {} }),
    (e) => e instanceof MalformedWebhook && e.message === 'The request body is not valid UTF-8.',
  );
  assert.deepEqual(post.parse!(signed({ object: 'whatsapp_business_account', entry: [{ id: '1' }] })), []);
  assert.deepEqual(post.parse!(signed({ entry: 'nonsense' })), []);
  assert.deepEqual(post.answer, {
    status: 200,
    contentType: 'application/json',
    body: '{"ok":true}',
    description: 'Processed',
    schema: { type: 'object' },
  });
});

test('the subscription handshake echoes hub.challenge only for our verify token', () => {
  const at = (q: string): WebhookRequest => ({ url: `/providers/whatsapp/webhook?${q}`, rawBody: Buffer.alloc(0), headers: {} });
  assert.deepEqual(get.handshake!(at('hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444')), {
    status: 200,
    contentType: 'text/plain',
    body: '1158201444',
  });
  assert.equal(get.handshake!(at('hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=1')), null);
  assert.equal(get.handshake!(at('hub.mode=unsubscribe&hub.verify_token=verify-me&hub.challenge=1')), null);
});

test('status map: sent, delivered, read and failed; anything else changes nothing', () => {
  assert.equal(wa.mapStatus, mapWhatsAppStatus);
  for (const s of ['sent', 'delivered', 'read', 'failed'] as const) assert.equal(mapWhatsAppStatus(s), s);
  for (const s of ['deleted', 'warning', 'accepted', '', 'toString', '__proto__']) assert.equal(mapWhatsAppStatus(s), null, s);
});

test('buildPayload stores the sending number with the Graph body; a malformed stored request is refused for good', async () => {
  const { prepared } = prepareWhatsAppMessage({ message: 'Hello', in_reply_to_gateway_id: WAMID });
  assert.ok(prepared);
  assert.deepEqual(wa.buildPayload({ providerPhoneNumberId: '106540352242922' }, '+255 712 345 678', prepared, WAMID), {
    phone_number_id: '106540352242922',
    body: {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '255712345678',
      type: 'text',
      text: { body: 'Hello', preview_url: false },
      context: { message_id: WAMID },
    },
  });
  const refused = await wa.send({ body: {} }, 'msg_1');
  assert.equal(refused.ok, false);
  assert.equal(!refused.ok && refused.permanent, true);
});
