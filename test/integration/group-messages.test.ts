import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { api, eventually, sim, uniquePhone } from '../support/stack.js';
import { keyWith, waTenant as groupTenant, type WaTenant } from '../support/groups.js';

// Messages into a chat group and pins (issue 15, points 3 and 4): free-form content only inside the
// group's 24-hour window, which a participant's message (the simulator's "participant writes"
// control, through the signed webhook) opens and stores as an inbound message of the group; templates
// go at any time; a group message is an outbound record with the group's id, sent to the group at the
// provider. Pins take a message of that group only, and expiration_days 1 to 30.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const em = () => orm.em.fork();
const G = '/api/v3/whatsapp/groups';

const waTenant = () => groupTenant('79');
async function activeGroup(t: WaTenant) {
  const r = await api('POST', G, t.token, { sender_id: t.phoneNumberId, subject: 'Posts' });
  assert.equal(r.status, 201, r.text);
  const id = r.body.data.id as number;
  const g = await eventually(
    () =>
      one<{ status: string; provider_group_id: string; invite_link: string; failure_reason: string | null }>(
        em(),
        'select * from chat_groups where id = ?',
        [id],
      ),
    (x) => x!.status !== 'creating',
    30_000,
    250,
  );
  assert.equal(g!.status, 'active', g!.failure_reason ?? '');
  return { id, providerGroupId: g!.provider_group_id, inviteLink: g!.invite_link };
}
const groupMessages = (id: number) =>
  many<{ uid: string; direction: string; status: string; sender: string; body: string; gateway_message_id: string | null }>(
    em(),
    'select uid, direction, status, sender, body, gateway_message_id from messages where chat_group_id = ? order by id',
    [id],
  );
const template = { template: { name: 'hello_world', language: 'en_US' } };

test('the group window: free-form is 422 until a participant writes (stored as the group’s inbound message); templates go at any time', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const user = uniquePhone('2557');
  assert.equal((await sim('POST', '/_sim/whatsapp/groups/join', { invite_link: g.inviteLink, from: user })).status, 200);

  const closed = await api('POST', `${G}/${g.id}/messages`, t.token, { message: 'Hello all' });
  assert.equal(closed.status, 422, closed.text);
  assert.match(closed.body.message, /template/i);
  const media = await api('POST', `${G}/${g.id}/messages`, t.token, { media_url: 'https://example.com/a.jpg', media_type: 'image' });
  assert.equal(media.status, 422, media.text);
  assert.deepEqual(await groupMessages(g.id), [], 'nothing written on refusals');

  const tpl = await api('POST', `${G}/${g.id}/messages`, t.token, template);
  assert.equal(tpl.status, 201, tpl.text);
  const sent = tpl.body.data;
  assert.equal(sent.group_id, g.id);
  assert.equal(sent.direction, 'outbound');
  assert.ok(sent.gateway_message_id, `answered with the provider's id: ${JSON.stringify(sent)}`);
  assert.equal(sent.recipient, g.providerGroupId);
  const simGroup = await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`);
  const out = (simGroup.body.messages as any[]).find((m) => m.id === sent.gateway_message_id);
  assert.equal(out.payload.recipient_type, 'group');
  assert.equal(out.payload.to, g.providerGroupId);
  assert.equal(out.payload.type, 'template');

  // A participant writes: the message is the group's, and the window opens.
  const wrote = await sim('POST', '/_sim/whatsapp/groups/inbound', { group_id: g.providerGroupId, from: user, text: 'Hi business' });
  assert.equal(wrote.status, 200, wrote.text);
  const inbound = await eventually(
    async () => (await groupMessages(g.id)).filter((m) => m.direction === 'inbound'),
    (x) => x.length === 1,
  );
  assert.equal(inbound.length, 1);
  assert.equal(inbound[0].body, 'Hi business');
  assert.equal(inbound[0].sender, user);
  assert.equal(inbound[0].gateway_message_id, wrote.body.wamid);
  const group = await api('GET', `${G}/${g.id}`, t.token);
  assert.ok(group.body.data.last_participant_message_at);
  const received = await many<{ payload: any }>(em(), `select payload from events where account_id = ? and kind = 'message.received'`, [
    t.accountId,
  ]);
  assert.equal(received.length, 1);
  assert.equal(received[0].payload.chat_group_id, g.id);

  const open = await api('POST', `${G}/${g.id}/messages`, t.token, { body: 'Welcome!' });
  assert.equal(open.status, 201, open.text);
  assert.equal(open.body.data.body, 'Welcome!');
  assert.ok(open.body.data.gateway_message_id);
  const pic = await api('POST', `${G}/${g.id}/messages`, t.token, {
    media_url: 'https://example.com/a.jpg',
    media_type: 'image',
    message: 'caption',
  });
  assert.equal(pic.status, 201, pic.text);

  // A window older than 24 hours is closed again.
  await one(em(), `update chat_groups set last_participant_message_at = now() - interval '25 hours' where id = ? returning id`, [g.id]);
  assert.equal((await api('POST', `${G}/${g.id}/messages`, t.token, { message: 'late' })).status, 422);
});

test('group message bad input: one kind only, limits; 422 and nothing written', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  await one(em(), 'update chat_groups set last_participant_message_at = now() where id = ? returning id', [g.id]);
  for (const body of [
    {},
    { message: '' },
    { message: 'x'.repeat(4097) },
    { message: 'hi', ...template },
    { media_url: 'https://example.com/a.jpg' },
    { media_url: 'https://example.com/a.jpg', media_type: 'image', ...template },
    { media_url: 'not a url', media_type: 'image' },
    { template: { language: 'en' } },
    { message: 'hi', language: 'en' },
    { interactive: { type: 'button' } },
  ]) {
    const r = await api('POST', `${G}/${g.id}/messages`, t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body).slice(0, 80)}: ${r.text}`);
  }
  assert.deepEqual(await groupMessages(g.id), []);
  // The template by name beside its language and components is the same send.
  const byName = await api('POST', `${G}/${g.id}/messages`, t.token, { template: 'hello_world', language: 'en_US' });
  assert.equal(byName.status, 201, byName.text);
});

test('pins: a message of this group only; expiration_days 1 to 30; unpin', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const other = await activeGroup(t);
  const sent = await api('POST', `${G}/${g.id}/messages`, t.token, template);
  assert.equal(sent.status, 201, sent.text);
  const uid = sent.body.data.uid as string;
  const elsewhere = await api('POST', `${G}/${other.id}/messages`, t.token, template);
  const otherUid = elsewhere.body.data.uid as string;
  const t2 = await waTenant();
  const foreign = await activeGroup(t2);
  const foreignSent = await api('POST', `${G}/${foreign.id}/messages`, t2.token, template);
  const foreignUid = foreignSent.body.data.uid as string;
  const chat = await api('POST', '/api/v3/whatsapp/send', t.token, { recipient: uniquePhone('2554'), ...template });
  const chatUid = chat.body.data.messages[0].uid as string;

  for (const days of [0, 31, 1.5, '7']) {
    const r = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: true, expiration_days: days });
    assert.equal(r.status, 422, `${days}: ${r.text}`);
  }
  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid })).status, 422, 'pin is required');
  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: otherUid, pin: true })).status, 422);
  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: chatUid, pin: true })).status, 422);
  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: foreignUid, pin: true })).status, 404);
  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: 'msg_nope', pin: true })).status, 404);
  assert.equal((await api('POST', `${G}/${foreign.id}/pin`, t.token, { message_uid: uid, pin: true })).status, 404);
  let simGroup = await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`);
  assert.deepEqual(simGroup.body.pins, [], 'nothing pinned by refusals');

  const pinned = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: true, expiration_days: 7 });
  assert.equal(pinned.status, 200, pinned.text);
  assert.deepEqual(pinned.body.data, { group_id: g.id, message_uid: uid, pinned: true, expiration_days: 7 });
  simGroup = await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`);
  assert.equal(simGroup.body.pins.length, 1);
  assert.equal(simGroup.body.pins[0].messageId, sent.body.data.gateway_message_id);
  const days = (Date.parse(simGroup.body.pins[0].expiresAt) - Date.parse(simGroup.body.pins[0].pinnedAt)) / 86_400_000;
  assert.equal(Math.round(days), 7);

  const unpinned = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: false });
  assert.equal(unpinned.status, 200, unpinned.text);
  assert.equal(unpinned.body.data.pinned, false);
  simGroup = await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`);
  assert.deepEqual(simGroup.body.pins, []);
  // Default: 30 days.
  const dflt = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: true });
  assert.equal(dflt.body.data.expiration_days, 30);
});

test('permissions and isolation: messages need manage and send, pins manage; another account’s group is 404; creating is 409', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const viewer = await keyWith(t, ['communications.groups.view']);
  const manager = await keyWith(t, ['communications.groups.manage']);
  const sender = await keyWith(t, ['communications.groups.manage', 'communications.send']);
  assert.equal((await api('POST', `${G}/${g.id}/messages`, viewer, template)).status, 403);
  assert.equal((await api('POST', `${G}/${g.id}/messages`, manager, template)).status, 403);
  assert.equal((await api('POST', `${G}/${g.id}/messages`, t.legacyToken, template)).status, 403);
  assert.deepEqual(await groupMessages(g.id), []);
  const ok = await api('POST', `${G}/${g.id}/messages`, sender, template);
  assert.equal(ok.status, 201, ok.text);
  const uid = ok.body.data.uid;
  assert.equal((await api('POST', `${G}/${g.id}/pin`, viewer, { message_uid: uid, pin: true })).status, 403);
  assert.equal((await api('POST', `${G}/${g.id}/pin`, manager, { message_uid: uid, pin: true })).status, 200);

  const other = await waTenant();
  assert.equal((await api('POST', `${G}/${g.id}/messages`, other.token, template)).status, 404);
  assert.equal((await api('POST', `${G}/${g.id}/pin`, other.token, { message_uid: uid, pin: true })).status, 404);

  const creating = await one<{ id: string }>(
    em(),
    `insert into chat_groups (account_id, sender_phone_number_id, subject, status, invitees, created_at, updated_at)
     values (?, ?, 'Not yet', 'creating', '[]'::jsonb, now(), now()) returning id`,
    [t.accountId, t.phoneNumberId],
  );
  const r = await api('POST', `${G}/${creating!.id}/messages`, t.token, template);
  assert.equal(r.status, 409, r.text);
  assert.deepEqual(await groupMessages(Number(creating!.id)), []);
  assert.equal((await api('POST', `${G}/${creating!.id}/pin`, t.token, { message_uid: uid, pin: true })).status, 409);
});

test('pin and unpin refused by the provider (group_error): 502 in the v3 envelope, the provider’s pins unchanged', async () => {
  // The pin runs in the chat-group change workflow; the fault takes the number's next group call.
  const t = await waTenant();
  const g = await activeGroup(t);
  const sent = await api('POST', `${G}/${g.id}/messages`, t.token, template);
  assert.equal(sent.status, 201, sent.text);
  assert.ok(sent.body.data.gateway_message_id, sent.text);
  const uid = sent.body.data.uid as string;
  const pins = async () => (await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`)).body.pins as any[];
  const refuse = async () =>
    assert.equal(
      (await sim('POST', '/_sim/faults', { provider: 'whatsapp', kind: 'group_error', to: t.phoneNumberId, code: 131207 })).status,
      201,
    );

  await refuse();
  const refused = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: true, expiration_days: 3 });
  assert.equal(refused.status, 502, refused.text);
  assert.equal(refused.body.status, 'error');
  assert.equal(refused.body.reason, 'provider_refused');
  assert.match(refused.body.message, /refused to pin.*131207/);
  assert.deepEqual(await pins(), []);

  assert.equal((await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: true, expiration_days: 3 })).status, 200);
  assert.equal((await pins()).length, 1);
  await refuse();
  const unpin = await api('POST', `${G}/${g.id}/pin`, t.token, { message_uid: uid, pin: false });
  assert.equal(unpin.status, 502, unpin.text);
  assert.match(unpin.body.message, /refused to unpin/);
  assert.equal((await pins()).length, 1, 'still pinned');
});
