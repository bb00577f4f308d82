import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import {
  WhatsAppGroupsClient,
  groupInviteComponents,
  groupMessagePayload,
  groupPinPayload,
} from '../../providers/whatsapp-cloud/groups.js';
import { parseWhatsAppGroupWebhook, parseWhatsAppWebhook, type WhatsAppGroupEvent } from '../../providers/whatsapp-cloud/webhook.js';
import { signMeta, verifyMetaSignature } from '../../providers/whatsapp-cloud/signature.js';
import { MalformedWebhook, type WebhookRequest } from '../../providers/types.js';
import { startReceiver, type Received } from '../support/receiver.js';

// The Groups API adapter against the in-process simulator (calls, per-item results, error mapping)
// and the group webhook parser against what the simulator signs and against Meta's documented shapes.
const APP_SECRET = 'sim-wa-app-secret';
let sim: Simulator;
let running: RunningSimulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let groups: WhatsAppGroupsClient;
let seq = 0;

before(async () => {
  receiver = await startReceiver();
  sim = createSimulator({ logger: pino({ level: 'silent' }), receiptDelayMs: 10, callbackRetries: 0, waWebhookUrl: receiver.url });
  running = await sim.listen(0);
  sim.state.groups.createDelayMs = 30;
  sim.state.groups.webhookDelayMs = 5;
  groups = new WhatsAppGroupsClient({ baseUrl: `${running.url}/whatsapp/v21.0`, accessToken: 'sim-wa-access-token', timeoutMs: 5000 });
});
after(async () => {
  await running?.close();
  await receiver?.close();
});

const number = () => `20650035224${String(++seq).padStart(4, '0')}`;
const user = (n: number) => `2557100000${String(n).padStart(2, '0')}`;
const control = async (path: string, body: unknown) => {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return (await res.json()) as any;
};
const asRequest = (r: Received): WebhookRequest => ({
  url: '/providers/whatsapp/webhook',
  headers: r.headers,
  rawBody: Buffer.from(r.body),
});

/** Every group event the receiver got so far, each from a webhook whose signature verifies. */
function events(): WhatsAppGroupEvent[] {
  return receiver.got.flatMap((r) => {
    assert.ok(verifyMetaSignature(APP_SECRET, Buffer.from(r.body), r.headers['x-hub-signature-256'] as string));
    return parseWhatsAppGroupWebhook(asRequest(r));
  });
}
/** Waits for the event's webhook itself (the receiver looks again on each request), not for a number of polls. */
function waitEvent<T extends WhatsAppGroupEvent['type']>(
  type: T,
  pred: (e: Extract<WhatsAppGroupEvent, { type: T }>) => boolean = () => true,
) {
  return receiver.waitFor(
    () =>
      events().find(
        (e): e is Extract<WhatsAppGroupEvent, { type: T }> => e.type === type && pred(e as Extract<WhatsAppGroupEvent, { type: T }>),
      ),
    `${type} event`,
  );
}
async function created(pn: string, joinApprovalMode?: 'auto_approve' | 'approval_required') {
  const r = await groups.createGroup(pn, { subject: 'Tea club', description: 'Weekly', joinApprovalMode });
  assert.ok(r.ok, JSON.stringify(r));
  return waitEvent('group_created', (e) => e.requestId === r.value.requestId);
}

test('createGroup answers a request id; the signed group_create webhook parses into group_created', async () => {
  const pn = number();
  const r = await groups.createGroup(pn, { subject: 'Tea club', description: 'Weekly', joinApprovalMode: 'approval_required' });
  assert.ok(r.ok);
  assert.match(r.value.requestId, /^[0-9a-f]{32}$/);
  const e = await waitEvent('group_created', (x) => x.requestId === r.value.requestId);
  assert.equal(e.phoneNumberId, pn);
  assert.deepEqual([e.subject, e.description, e.joinApprovalMode], ['Tea club', 'Weekly', 'approval_required']);
  assert.match(e.inviteLink ?? '', /^https:\/\/chat\.whatsapp\.com\//);
  assert.ok(e.at instanceof Date && Math.abs(e.at.getTime() - Date.now()) < 5000);

  const info = await groups.getGroup(e.groupId);
  assert.ok(info.ok);
  assert.deepEqual(
    { ...info.value, createdAt: null },
    {
      groupId: e.groupId,
      subject: 'Tea club',
      description: 'Weekly',
      participants: [],
      joinApprovalMode: 'approval_required',
      suspended: false,
      createdAt: null,
      totalParticipantCount: 0,
    },
  );
  const list = await groups.listGroups(pn, { limit: 10 });
  assert.ok(list.ok);
  assert.deepEqual(
    list.value.items.map((g) => g.groupId),
    [e.groupId],
  );
  assert.equal(list.value.after, null, 'no next page');
});

test('a failing creation parses into group_create_failed with Meta’s code and message', async () => {
  const pn = number();
  await control('/faults', {
    provider: 'whatsapp',
    kind: 'group_create_fail',
    to: pn,
    code: 131214,
    message: 'too many marketing messages',
  });
  const r = await groups.createGroup(pn, { subject: 'S' });
  assert.ok(r.ok);
  const e = await waitEvent('group_create_failed', (x) => x.requestId === r.value.requestId);
  assert.deepEqual(e.errors, [{ code: 131214, message: 'too many marketing messages' }]);
});

test('Graph refusals are permanent with Meta’s code; throttles, outages and transport errors are retryable', async () => {
  const ineligible = await groups.createGroup('2065000131215', { subject: 'S' });
  assert.ok(!ineligible.ok);
  assert.deepEqual([ineligible.permanent, ineligible.code, ineligible.httpStatus], [true, '131215', 400]);
  assert.match(ineligible.message, /not eligible/);
  const tooLong = await groups.createGroup(number(), { subject: 'x'.repeat(129) });
  assert.ok(!tooLong.ok);
  assert.deepEqual([tooLong.permanent, tooLong.code], [true, '131009']);
  const unknown = await groups.getGroup('Y2FwaV9ncm91cDpub3BlOjE');
  assert.ok(!unknown.ok);
  assert.deepEqual([unknown.permanent, unknown.code], [true, '131041']);

  const pn = number();
  await control('/faults', { provider: 'whatsapp', kind: 'group_error', to: pn, code: 131208, retryAfter: 7 });
  const throttled = await groups.createGroup(pn, { subject: 'S' });
  assert.ok(!throttled.ok);
  assert.deepEqual([throttled.permanent, throttled.code, throttled.httpStatus, throttled.retryAfterSeconds], [false, '131208', 429, 7]);
  await control('/faults', { provider: 'whatsapp', kind: 'group_error', to: pn });
  const outage = await groups.listGroups(pn);
  assert.ok(!outage.ok);
  assert.deepEqual([outage.permanent, outage.code], [false, '131000']);

  const nowhere = new WhatsAppGroupsClient({ baseUrl: 'http://127.0.0.1:9/whatsapp/v21.0', accessToken: 't', timeoutMs: 500 });
  const down = await nowhere.createGroup(pn, { subject: 'S' });
  assert.ok(!down.ok);
  assert.equal(down.permanent, false);
  const anon = await new WhatsAppGroupsClient({ baseUrl: `${running.url}/whatsapp/v21.0`, accessToken: 'wrong' }).getInviteLink(
    'Y2FwaV9ncm91cDpub3BlOjE',
  );
  assert.ok(!anon.ok);
  assert.deepEqual([anon.permanent, anon.code, anon.httpStatus], [true, '190', 401]);
});

test('update, invite link get/reset and delete, each confirmed by its webhook event', async () => {
  const pn = number();
  const g = await created(pn);
  const upd = await groups.updateGroup(g.groupId, { subject: 'Coffee club', description: '' });
  assert.deepEqual(upd, { ok: true, value: { accepted: true } });
  const s = await waitEvent('settings_updated', (e) => e.groupId === g.groupId);
  assert.deepEqual(s.subject, { text: 'Coffee club', ok: true, errors: [] });
  assert.deepEqual(s.description, { text: '', ok: true, errors: [] });
  assert.equal(s.profilePicture, undefined);

  const link = await groups.getInviteLink(g.groupId);
  assert.deepEqual(link, { ok: true, value: { inviteLink: g.inviteLink } });
  const reset = await groups.resetInviteLink(g.groupId);
  assert.ok(reset.ok);
  assert.notEqual(reset.value.inviteLink, g.inviteLink);

  const del = await groups.deleteGroup(g.groupId);
  assert.ok(del.ok);
  const d = await waitEvent('group_deleted', (e) => e.groupId === g.groupId);
  assert.equal(d.phoneNumberId, pn);
  const again = await groups.deleteGroup(g.groupId);
  assert.ok(!again.ok);
  assert.equal(again.code, '131041');
});

test('join requests: listed, approved and rejected per item; every item failing is still a per-item answer', async () => {
  const pn = number();
  const g = await created(pn, 'approval_required');
  const a = await control('/whatsapp/groups/join', { invite_link: g.inviteLink, from: user(1) });
  const b = await control('/whatsapp/groups/join-requests', { group_id: g.groupId, from: user(2) });
  const c = await control('/whatsapp/groups/join-requests', { group_id: g.groupId, from: user(3) });
  const created1 = await waitEvent('join_request_created', (e) => e.groupId === g.groupId && e.waId === user(1));
  assert.equal(created1.joinRequestId, a.join_request_id);
  await control('/whatsapp/groups/join-requests/revoke', { group_id: g.groupId, join_request_id: c.join_request_id });
  const revoked = await waitEvent('join_request_revoked', (e) => e.groupId === g.groupId);
  assert.deepEqual([revoked.joinRequestId, revoked.waId], [c.join_request_id, user(3)]);

  const listed = await groups.listJoinRequests(g.groupId, { limit: 1 });
  assert.ok(listed.ok);
  assert.deepEqual(
    listed.value.items.map((r) => r.joinRequestId),
    [a.join_request_id],
  );
  assert.ok(listed.value.after);
  const next = await groups.listJoinRequests(g.groupId, { limit: 1, after: listed.value.after });
  assert.ok(next.ok);
  assert.deepEqual(
    next.value.items.map((r) => [r.joinRequestId, r.waId]),
    [[b.join_request_id, user(2)]],
  );
  assert.equal(next.value.after, null);

  const approved = await groups.approveJoinRequests(g.groupId, [a.join_request_id, 'nope']);
  assert.ok(approved.ok);
  assert.deepEqual(approved.value.succeeded, [a.join_request_id]);
  assert.equal(approved.value.failed.length, 1);
  assert.equal(approved.value.failed[0].item, 'nope');
  assert.equal(approved.value.failed[0].code, '131213');
  const added = await waitEvent('participants_added', (e) => e.groupId === g.groupId);
  assert.deepEqual([added.reason, added.participants], ['invite_link', [{ waId: user(1), input: null }]]);

  const none = await groups.approveJoinRequests(g.groupId, ['nope', 'nada']);
  assert.ok(none.ok, 'unknown ids are per-item failures, not a failed call');
  assert.deepEqual(none.value.succeeded, []);
  assert.deepEqual(
    none.value.failed.map((f) => [f.item, f.code]),
    [
      ['nope', '131213'],
      ['nada', '131213'],
    ],
  );

  const rejected = await groups.rejectJoinRequests(g.groupId, [b.join_request_id]);
  assert.deepEqual(rejected, { ok: true, value: { succeeded: [b.join_request_id], failed: [] } });
  const info = await groups.getGroup(g.groupId);
  assert.ok(info.ok);
  assert.deepEqual(info.value.participants, [user(1)]);
});

test('removeParticipants: per-user results; removal and leaving parse into participants_removed', async () => {
  const pn = number();
  const g = await created(pn);
  for (const n of [1, 2]) await control('/whatsapp/groups/join', { group_id: g.groupId, from: user(n) });
  const r = await groups.removeParticipants(g.groupId, [`+${user(1)}`, user(9)]);
  assert.ok(r.ok);
  assert.deepEqual(r.value.succeeded, [`+${user(1)}`]);
  assert.deepEqual(
    r.value.failed.map((f) => [f.item, f.code]),
    [[user(9), '131212']],
  );
  const removed = await waitEvent('participants_removed', (e) => e.groupId === g.groupId && e.initiatedBy === 'business');
  assert.deepEqual(removed.participants, [{ waId: user(1), input: `+${user(1)}` }]);
  const all = await groups.removeParticipants(g.groupId, [user(9)]);
  assert.ok(all.ok);
  assert.deepEqual(
    all.value.failed.map((f) => f.code),
    ['131212'],
  );
  const nine = await groups.removeParticipants(
    g.groupId,
    Array.from({ length: 9 }, (_, i) => user(i + 1)),
  );
  assert.ok(!nine.ok, 'a malformed call is a failure of the whole call');
  assert.deepEqual([nine.permanent, nine.code], [true, '131009']);
  await control('/whatsapp/groups/leave', { group_id: g.groupId, from: user(2) });
  const left = await waitEvent('participants_removed', (e) => e.groupId === g.groupId && e.initiatedBy === 'participant');
  assert.deepEqual(left.participants, [{ waId: user(2), input: null }]);
});

test('sendMessage and pin go through the messages endpoint; group statuses parse as ordinary statuses', async () => {
  const pn = number();
  const g = await created(pn);
  await control('/whatsapp/groups/join', { group_id: g.groupId, from: user(1) });
  const text = await groups.sendMessage(pn, g.groupId, { kind: 'text', body: 'Hello' }, 'k1');
  assert.ok(text.ok);
  const doc = await groups.sendMessage(
    pn,
    g.groupId,
    { kind: 'document', link: 'https://example.com/menu.pdf', caption: 'Menu', filename: 'menu.pdf' },
    'k2',
  );
  assert.ok(doc.ok);
  const tpl = await groups.sendMessage(pn, g.groupId, { kind: 'template', name: 'weekly', language: 'en', components: [] }, 'k3');
  assert.ok(tpl.ok);
  const stored = sim.state.groups.groups.get(g.groupId)!.messages;
  assert.deepEqual(
    stored.map((m) => m.headers?.['x-idempotency-key']),
    ['k1', 'k2', 'k3'],
  );
  assert.deepEqual((stored[1].payload as any).document, { link: 'https://example.com/menu.pdf', caption: 'Menu', filename: 'menu.pdf' });

  const pinned = await groups.pin(pn, g.groupId, { messageId: text.value.providerMessageId, pin: true, expirationDays: 7 }, 'k4');
  assert.ok(pinned.ok);
  assert.deepEqual(
    sim.state.groups.groups.get(g.groupId)!.pins.map((p) => p.messageId),
    [text.value.providerMessageId],
  );
  const noDays = await groups.pin(pn, g.groupId, { messageId: text.value.providerMessageId, pin: true }, 'k5');
  assert.ok(!noDays.ok);
  assert.deepEqual([noDays.permanent, noDays.code], [true, '131008']);
  const unpinned = await groups.pin(pn, g.groupId, { messageId: text.value.providerMessageId, pin: false }, 'k6');
  assert.ok(unpinned.ok);
  assert.equal(sim.state.groups.groups.get(g.groupId)!.pins.length, 0);
  const unknown = await groups.sendMessage(pn, 'Y2FwaV9ncm91cDpub3BlOjE', { kind: 'text', body: 'x' }, 'k7');
  assert.ok(!unknown.ok);
  assert.deepEqual([unknown.permanent, unknown.code], [true, '131041']);

  // The read status of our group message reaches the ordinary status path, keyed by the wamid.
  const id = text.value.providerMessageId;
  const statuses = await receiver.waitFor((got) => {
    const found = got.flatMap((r) => parseWhatsAppWebhook(asRequest(r))).filter((e) => e.type === 'status' && e.providerMessageId === id);
    return found.some((s) => s.type === 'status' && s.status === 'read') ? found : null;
  }, 'read status for the group message');
  assert.deepEqual([...new Set(statuses.map((s) => (s.type === 'status' ? s.status : '')))], ['sent', 'delivered', 'read']);
});

test('a participant’s group message parses into group_message and stays out of the 1:1 inbound path', async () => {
  const pn = number();
  const g = await created(pn);
  await control('/whatsapp/groups/join', { group_id: g.groupId, from: user(1) });
  const r = await control('/whatsapp/groups/inbound', { group_id: g.groupId, from: user(1), text: 'Hi all' });
  const e = await waitEvent('group_message', (x) => x.message.providerMessageId === r.wamid);
  assert.equal(e.groupId, g.groupId);
  assert.equal(e.phoneNumberId, pn);
  assert.deepEqual(
    [e.message.type, e.message.from, e.message.body, e.message.businessNumber, e.message.metadata],
    ['inbound', user(1), 'Hi all', { phoneNumberId: pn }, { type: 'text', group_id: g.groupId }],
  );
  const raw = receiver.got.find((x) => x.body.includes(r.wamid))!;
  assert.deepEqual(parseWhatsAppWebhook(asRequest(raw)), [], 'not a 1:1 inbound message');
  await control('/whatsapp/groups/suspend', { group_id: g.groupId, suspended: true });
  await waitEvent('group_suspended', (x) => x.groupId === g.groupId);
  await control('/whatsapp/groups/suspend', { group_id: g.groupId, suspended: false });
  await waitEvent('group_suspend_cleared', (x) => x.groupId === g.groupId);
});

// --- The parser against Meta's documented shapes --------------------------------------------------

const META = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
function signed(field: string, value: Record<string, unknown>): WebhookRequest {
  const raw = JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [{ id: '102290129340398', changes: [{ field, value: { messaging_product: 'whatsapp', metadata: META, ...value } }] }],
  });
  return { url: '/providers/whatsapp/webhook', rawBody: Buffer.from(raw), headers: { 'x-hub-signature-256': signMeta('s', raw) } };
}
const GID = 'Y2FwaV9ncm91cDoxNzA1NTU1MDEzOToxMjAzNjM0MDQ2OTQyMzM4MjAZD';

test('parser: every group field and type; items it cannot use yield nothing; other fields are ignored', () => {
  const at = '1700000000';
  const lifecycle = parseWhatsAppGroupWebhook(
    signed('group_lifecycle_update', {
      groups: [
        {
          timestamp: at,
          group_id: GID,
          type: 'group_create',
          request_id: 'r1',
          subject: 'S',
          invite_link: 'https://chat.whatsapp.com/x',
          join_approval_mode: 'auto_approve',
        },
        { timestamp: at, type: 'group_create', request_id: 'r2', errors: [{ code: 131211, title: 'Group creation limit reached' }] },
        { timestamp: at, group_id: GID, type: 'group_delete', request_id: 'r3' },
        { timestamp: at, type: 'group_create' },
        { timestamp: at, group_id: GID, type: 'group_archive' },
      ],
    }),
  );
  assert.deepEqual(lifecycle, [
    {
      phoneNumberId: META.phone_number_id,
      at: new Date(1_700_000_000_000),
      type: 'group_created',
      requestId: 'r1',
      groupId: GID,
      subject: 'S',
      description: null,
      inviteLink: 'https://chat.whatsapp.com/x',
      joinApprovalMode: 'auto_approve',
    },
    {
      phoneNumberId: META.phone_number_id,
      at: new Date(1_700_000_000_000),
      type: 'group_create_failed',
      requestId: 'r2',
      errors: [{ code: 131211, message: 'Group creation limit reached' }],
    },
    {
      phoneNumberId: META.phone_number_id,
      at: new Date(1_700_000_000_000),
      type: 'group_deleted',
      groupId: GID,
      requestId: 'r3',
      errors: [],
    },
  ]);

  const participants = parseWhatsAppGroupWebhook(
    signed('group_participants_update', {
      groups: [
        {
          timestamp: at,
          group_id: GID,
          type: 'group_participants_add',
          reason: 'invite_link',
          added_participants: [{ wa_id: '16505551234' }],
        },
        {
          timestamp: at,
          group_id: GID,
          type: 'group_participants_remove',
          initiated_by: 'business',
          removed_participants: [{ input: '+1 650 555 1234', wa_id: '16505551234' }],
          failed_participants: [
            {
              input: '16505550000',
              errors: [{ code: 131212, message: 'Participant not in group', error_data: { details: 'not a member' } }],
            },
          ],
        },
        { timestamp: at, group_id: GID, type: 'group_join_request_created', join_request_id: 'j1', wa_id: '16505551234' },
        { timestamp: at, group_id: GID, type: 'group_join_request_revoked', join_request_id: 'j1', wa_id: '16505551234' },
        { timestamp: at, group_id: GID, type: 'group_join_request_created' },
        { timestamp: at, type: 'group_participants_add', added_participants: [] },
      ],
    }),
  );
  assert.deepEqual(
    participants.map((e) => e.type),
    ['participants_added', 'participants_removed', 'join_request_created', 'join_request_revoked'],
  );
  const removed = participants[1] as Extract<WhatsAppGroupEvent, { type: 'participants_removed' }>;
  assert.deepEqual(removed.participants, [{ waId: '16505551234', input: '+1 650 555 1234' }]);
  assert.deepEqual(removed.failed, [{ input: '16505550000', waId: null, errors: [{ code: 131212, message: 'not a member' }] }]);

  const [settings] = parseWhatsAppGroupWebhook(
    signed('group_settings_update', {
      groups: [
        {
          timestamp: at,
          group_id: GID,
          type: 'group_settings_update',
          group_subject: { text: 'New', update_successful: true },
          profile_picture: { update_successful: false, errors: [{ code: 131209, message: 'aspect ratio' }] },
        },
      ],
    }),
  );
  assert.ok(settings.type === 'settings_updated');
  assert.deepEqual(settings.subject, { text: 'New', ok: true, errors: [] });
  assert.deepEqual(settings.profilePicture, { text: null, ok: false, errors: [{ code: 131209, message: 'aspect ratio' }] });
  assert.equal(settings.description, undefined);

  const status = parseWhatsAppGroupWebhook(
    signed('group_status_update', {
      groups: [
        { timestamp: at, group_id: GID, type: 'group_suspend' },
        { timestamp: at, group_id: GID, type: 'group_suspend_cleared' },
      ],
    }),
  );
  assert.deepEqual(
    status.map((e) => e.type),
    ['group_suspended', 'group_suspend_cleared'],
  );

  const ordinary = signed('messages', {
    contacts: [],
    messages: [{ from: '16505551234', id: 'wamid.A', timestamp: at, type: 'text', text: { body: 'hi' } }],
  });
  assert.deepEqual(parseWhatsAppGroupWebhook(ordinary), [], 'a 1:1 message is not a group event');
  assert.equal(parseWhatsAppWebhook(ordinary).length, 1, 'and still a 1:1 inbound message');
  assert.deepEqual(
    parseWhatsAppWebhook(signed('group_lifecycle_update', { groups: [{ type: 'group_create', group_id: GID, request_id: 'r' }] })),
    [],
  );
});

test('parser: a group message may name its group in context; malformed JSON is refused', () => {
  const req = signed('messages', {
    messages: [
      {
        from: '16505551234',
        id: 'wamid.B',
        timestamp: '1700000000',
        type: 'image',
        image: { id: '9', mime_type: 'image/jpeg', caption: 'look' },
        context: { group_id: GID },
      },
    ],
  });
  const [e] = parseWhatsAppGroupWebhook(req);
  assert.ok(e.type === 'group_message');
  assert.equal(e.groupId, GID);
  assert.deepEqual([e.message.body, e.message.mediaType, e.message.from], ['look', 'image', '16505551234']);
  assert.deepEqual(parseWhatsAppWebhook(req), []);
  assert.throws(() => parseWhatsAppGroupWebhook({ url: '/', headers: {}, rawBody: Buffer.from('{') }), MalformedWebhook);
});

test('payload builders: group sends, pins and the invite template parameter', () => {
  assert.deepEqual(groupMessagePayload(GID, { kind: 'text', body: 'x' }), {
    messaging_product: 'whatsapp',
    recipient_type: 'group',
    to: GID,
    type: 'text',
    text: { body: 'x', preview_url: false },
  });
  assert.deepEqual(groupMessagePayload(GID, { kind: 'audio', link: 'https://a/b.ogg', caption: 'ignored' }).audio, {
    link: 'https://a/b.ogg',
  });
  assert.deepEqual(groupMessagePayload(GID, { kind: 'template', name: 'n', language: 'en' }).template, {
    name: 'n',
    language: { code: 'en' },
  });
  assert.deepEqual(groupPinPayload(GID, { messageId: 'wamid.X', pin: true, expirationDays: 30 }).pin, {
    type: 'pin',
    message_id: 'wamid.X',
    expiration_days: 30,
  });
  assert.deepEqual(groupPinPayload(GID, { messageId: 'wamid.X', pin: false, expirationDays: 30 }).pin, {
    type: 'unpin',
    message_id: 'wamid.X',
  });
  assert.deepEqual(groupInviteComponents(GID), [{ type: 'body', parameters: [{ type: 'group_id', group_id: GID }] }]);
});

test('the invite template (group_id body parameter) is accepted by the simulator’s 1:1 send', async () => {
  const res = await fetch(`${running.url}/whatsapp/v21.0/${number()}/messages`, {
    method: 'POST',
    headers: { authorization: 'Bearer sim-wa-access-token', 'content-type': 'application/json' },
    body: JSON.stringify({
      messaging_product: 'whatsapp',
      to: user(1),
      type: 'template',
      template: { name: 'group_invite', language: { code: 'en' }, components: groupInviteComponents(GID) },
    }),
  });
  assert.equal(res.status, 200, await res.text());
});
