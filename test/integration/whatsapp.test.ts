import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, admin, newTenant, eventually, sim, uniquePhone } from '../support/stack.js';

const customer = () => uniquePhone('2553');

async function waTenant() {
  const t = await newTenant();
  const phoneNumberId = `10${t.accountId}${Date.now() % 100000}`;
  const number = `+2552${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  return { ...t, phoneNumberId, number };
}
const read = (t: { token: string }, uid: string) => api('GET', `/api/v3/whatsapp/${uid}`, t.token);
const simSeen = async (to: string) =>
  (await sim('GET', `/_sim/whatsapp/messages?to=${encodeURIComponent(to.replace('+', ''))}`)).body.messages as any[];

test('free-form text outside the 24-hour window: 201, then failed with the provider refusal (not 422)', async () => {
  const t = await waTenant();
  const r = await api('POST', '/api/v3/whatsapp/send', t.token, { recipient: customer(), message: 'hello?' });
  assert.equal(r.status, 201);
  const m = r.body.data.messages[0];
  assert.equal(m.channel_type, 'whatsapp');
  const failed = await eventually(
    () => read(t, m.uid),
    (x) => x.body.data.status === 'failed',
  );
  assert.equal(failed.body.data.status, 'failed');
  assert.match(failed.body.data.error_message, /131047/);
});

test('an inbound message is stored as received and opens the window: text then goes sent → delivered → read', async () => {
  const t = await waTenant();
  const c = customer();
  const inbound = await sim('POST', '/_sim/whatsapp/inbound', {
    from: c.replace('+', ''),
    phone_number_id: t.phoneNumberId,
    text: 'hi shop',
  });
  assert.equal(inbound.body.delivered, true, JSON.stringify(inbound.body));
  const list = await eventually(
    () => api('GET', '/api/v3/messages?direction=inbound', t.token),
    (x) => x.body.data.messages.length === 1,
  );
  const got = list.body.data.messages[0];
  assert.deepEqual([got.direction, got.status, got.body, got.sender], ['inbound', 'received', 'hi shop', c]);
  const r = await api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: c,
    message: 'welcome',
    in_reply_to_gateway_id: got.gateway_message_id,
  });
  const m = r.body.data.messages[0];
  const done = await eventually(
    () => read(t, m.uid),
    (x) => x.body.data.status === 'read',
  );
  assert.equal(done.body.data.status, 'read');
  assert.ok(done.body.data.read_at);
  assert.ok(done.body.data.delivered_at);
  const [sentReq] = await simSeen(c);
  assert.deepEqual(sentReq.request.body.context, { message_id: got.gateway_message_id });
  assert.equal(sentReq.request.body.messaging_product, 'whatsapp');
  assert.deepEqual(sentReq.request.body.text, { body: 'welcome', preview_url: false });
});

test('templates are allowed outside the window and reach the provider in the Cloud API shape', async () => {
  const t = await waTenant();
  const c = customer();
  const components = [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }];
  const r = await api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: c,
    message_type: 'template',
    message: 'preview',
    template: { name: 'order_update', components },
  });
  assert.equal(r.status, 201);
  const m = r.body.data.messages[0];
  assert.equal(m.body, 'preview');
  assert.deepEqual(m.template_params, { name: 'order_update', language: 'en', components });
  const done = await eventually(
    () => read(t, m.uid),
    (x) => ['delivered', 'read'].includes(x.body.data.status),
  );
  assert.ok(['delivered', 'read'].includes(done.body.data.status));
  const [req] = await simSeen(c);
  assert.deepEqual(req.request.body.template, { name: 'order_update', language: { code: 'en' }, components });
});

test('media, interactive and reaction sends; combination rules and limits are 422', async () => {
  const t = await waTenant();
  const c = customer();
  await sim('POST', '/_sim/whatsapp/inbound', { from: c.replace('+', ''), phone_number_id: t.phoneNumberId, text: 'open' });
  const image = await api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: c,
    message_type: 'image',
    media_url: 'https://example.com/a.jpg',
    media_type: 'image',
    message: 'look',
  });
  assert.equal(image.status, 201);
  const buttons = {
    type: 'button',
    body: { text: 'Pick one' },
    action: { buttons: [1, 2, 3].map((i) => ({ type: 'reply', reply: { id: `b${i}`, title: `Option ${i}` } })) },
  };
  assert.equal(
    (await api('POST', '/api/v3/whatsapp/send', t.token, { recipient: c, message_type: 'interactive', interactive: buttons })).status,
    201,
  );
  const target = (
    await eventually(
      () => simSeen(c),
      (l) => l.length >= 1,
    )
  )[0].id;
  const reaction = await api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: c,
    message_type: 'reaction',
    reaction: { emoji: '👍' },
    in_reply_to_gateway_id: target,
  });
  assert.equal(reaction.status, 201);
  assert.deepEqual(reaction.body.data.messages[0].metadata.reaction, { message_id: target, emoji: '👍' });

  const bad: Array<[Record<string, unknown>, string]> = [
    [{ message_type: 'template', template: { name: 'x' }, media_url: 'https://e.com/a.jpg' }, 'media_url'],
    [
      {
        message_type: 'interactive',
        interactive: { ...buttons, action: { buttons: [...buttons.action.buttons, buttons.action.buttons[0]] } },
      },
      'interactive.action.buttons',
    ],
    [{ message_type: 'reaction', reaction: { emoji: '👍', message_id: 'wamid.x' }, message: 'text too' }, 'message'],
    [{ message_type: 'template', template: { name: 'n'.repeat(192) } }, 'template.name'],
    [{ message_type: 'image', media_url: 'https://e.com/a.jpg' }, 'media_type'],
    [{ message_type: 'text', message: 'x', in_reply_to_gateway_id: 'msg_local' }, 'in_reply_to_gateway_id'],
    [{ message_type: 'text' }, 'message'],
  ];
  for (const [body, field] of bad) {
    const r = await api('POST', '/api/v3/whatsapp/send', t.token, { recipient: c, ...body });
    assert.equal(r.status, 422, JSON.stringify(body).slice(0, 100));
    assert.ok(
      Object.keys(r.body.errors).some((k) => k.startsWith(field)),
      `${field}: ${JSON.stringify(r.body.errors)}`,
    );
  }
});

test('message_type whatsapp on the SMS endpoint routes to the chat channel', async () => {
  const t = await waTenant();
  const r = await api('POST', '/api/v3/sms/send', t.token, {
    recipient: customer(),
    message: 'via sms endpoint',
    message_type: 'whatsapp',
  });
  assert.equal(r.status, 201);
  assert.equal(r.body.data.messages[0].channel_type, 'whatsapp');
  assert.equal(r.body.data.messages[0].channel_code, `whatsapp:${t.phoneNumberId}`);
});

test('reads: a foreign or missing chat message is 404; accounts lists the business numbers', async () => {
  const t = await waTenant();
  const other = await waTenant();
  const r = await api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: customer(),
    message_type: 'template',
    template: { name: 'hello' },
  });
  const uid = r.body.data.messages[0].uid;
  assert.equal((await read(t, uid)).status, 200);
  assert.equal((await read(other, uid)).status, 404);
  assert.equal((await read(t, 'msg_missing')).status, 404);
  assert.equal((await api('GET', `/api/v3/sms/${uid}`, t.token)).status, 404, 'an SMS read does not show a chat message');
  const accounts = await api('GET', '/api/v3/whatsapp/accounts', t.token);
  assert.equal(accounts.body.data.accounts[0].phone_numbers[0].phone_number_id, t.phoneNumberId);
  const none = await newTenant();
  const refused = await api('POST', '/api/v3/whatsapp/send', none.token, { recipient: customer(), message: 'x' });
  assert.equal(refused.status, 422);
  assert.ok(refused.body.errors.sender_id);
});

test('inbound SMS is stored for the account owning the number', async () => {
  const t = await newTenant();
  const business = `+2551${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  await admin('POST', `/accounts/${t.accountId}/phone-numbers`, { number: business, capabilities: ['sms'] });
  const c = customer();
  const posted = await sim('POST', '/_sim/sms/inbound', { from: c, to: business, body: 'STATUS?' });
  assert.ok(posted.status < 300, JSON.stringify(posted.body));
  const list = await eventually(
    () => api('GET', '/api/v3/messages?direction=inbound&channel_type=sms', t.token),
    (x) => x.body.data.messages.length === 1,
  );
  const m = list.body.data.messages[0];
  assert.deepEqual([m.channel_type, m.status, m.body, m.sender, m.recipient], ['sms', 'received', 'STATUS?', c, business]);
});

test('the message list filters by status and direction, newest first, with the pagination object', async () => {
  const t = await newTenant();
  for (let i = 0; i < 3; i++) await api('POST', '/api/v3/sms/send', t.token, { recipient: customer(), message: `n${i}` });
  await api('POST', '/api/v3/sms/send', t.token, { recipients: ['bad-number'], message: 'fails' });
  const page = await api('GET', '/api/v3/messages?per_page=2&page=1', t.token);
  assert.equal(page.body.data.messages.length, 2);
  assert.deepEqual(page.body.data.pagination, { current_page: 1, per_page: 2, last_page: 2, total: 4, has_more_pages: true });
  assert.ok(page.body.data.messages[0].id > page.body.data.messages[1].id);
  const failed = await api('GET', '/api/v3/messages?status=failed', t.token);
  assert.equal(failed.body.data.messages.length, 1);
  assert.equal((await api('GET', '/api/v3/messages?limit=3&per_page=1', t.token)).body.data.pagination.per_page, 3);
  assert.equal((await api('GET', '/api/v3/messages?status=bogus', t.token)).status, 422);
  // The same page rules as the contact and group lists: a page size below 1 is refused, not guessed.
  for (const q of ['limit=0', 'per_page=0', 'page=0']) assert.equal((await api('GET', `/api/v3/messages?${q}`, t.token)).status, 422, q);
});
