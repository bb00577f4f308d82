import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { startReceiver, type Received } from '../support/receiver.js';

// The simulator's WhatsApp Groups API, in process, on the wire: every endpoint, its error codes, the
// signed group webhooks a local receiver gets, the faults and the test controls.
const TOKEN = 'sim-wa-access-token';
const APP_SECRET = 'sim-wa-app-secret';
const CREATE_DELAY_MS = 60;
/** Longer than any run: a creation held this long stays pending until the test completes it. */
const HELD_MS = 10 * 60_000;
let sim: Simulator;
let running: RunningSimulator;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let base: string;
let numberSeq = 0;

before(async () => {
  receiver = await startReceiver();
  sim = createSimulator({ logger: pino({ level: 'silent' }), receiptDelayMs: 10, callbackRetries: 0 });
  running = await sim.listen(0);
  base = `${running.url}/whatsapp/v21.0`;
  await control('POST', '/config', { waWebhookUrl: receiver.url });
  await control('POST', '/whatsapp/groups/config', { createDelayMs: CREATE_DELAY_MS, webhookDelayMs: 5 });
});
after(async () => {
  await running?.close();
  await receiver?.close();
});

/** A fresh business number per test, so webhooks and faults never cross between tests. */
const number = () => `10650035224${String(++numberSeq).padStart(4, '0')}`;
const user = (n: number) => `2557000000${String(n).padStart(2, '0')}`;

const graph = async (method: string, path: string, body?: unknown, token = TOKEN) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
async function control(method: string, path: string, body?: unknown) {
  const res = await fetch(`${running.url}/_sim${path}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The group items (value.groups[]) of one field the receiver got, each with its envelope. */
function hooks(field: string, pred: (item: any, value: any) => boolean = () => true): Array<{ item: any; value: any; raw: Received }> {
  const out: Array<{ item: any; value: any; raw: Received }> = [];
  for (const raw of receiver.got) {
    for (const entry of raw.json?.entry ?? []) {
      for (const change of entry.changes ?? []) {
        if (change.field !== field) continue;
        const items = field === 'messages' ? [...(change.value.statuses ?? []), ...(change.value.messages ?? [])] : change.value.groups;
        for (const item of items ?? []) if (pred(item, change.value)) out.push({ item, value: change.value, raw });
      }
    }
  }
  return out;
}
/** Waits for the webhooks themselves (the receiver looks again on each request), not for a number of polls. */
function waitHook(field: string, pred: (item: any, value: any) => boolean, count = 1) {
  return receiver.waitFor(() => {
    const found = hooks(field, pred);
    return found.length >= count ? found : null;
  }, `${field} webhook`);
}
const signedByMeta = (r: Received) =>
  r.headers['x-hub-signature-256'] === `sha256=${createHmac('sha256', APP_SECRET).update(r.body, 'utf8').digest('hex')}`;

/** Creates a group and waits for its group_create webhook. */
async function createGroup(pn: string, body: Record<string, unknown> = {}) {
  const res = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'Tea club', ...body });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [hook] = await waitHook('group_lifecycle_update', (g) => g.request_id === res.body.request_id);
  return { requestId: res.body.request_id as string, groupId: hook.item.group_id as string, link: hook.item.invite_link as string, hook };
}
async function join(groupId: string, n: number) {
  const r = await control('POST', '/whatsapp/groups/join', { group_id: groupId, from: user(n) });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

test('creation is asynchronous: a request id at once, then a signed group_create lifecycle webhook', async () => {
  const pn = number();
  // Pending is looked at while the creation is held, not within CREATE_DELAY_MS of the answer: on a
  // loaded machine the next request can come after the delay, and the group would already exist.
  await control('POST', '/whatsapp/groups/config', { createDelayMs: HELD_MS });
  let held: Awaited<ReturnType<typeof graph>>;
  try {
    held = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'Held' });
  } finally {
    await control('POST', '/whatsapp/groups/config', { createDelayMs: CREATE_DELAY_MS });
  }
  assert.equal(held.status, 200);
  assert.deepEqual(Object.keys(held.body).sort(), ['messaging_product', 'request_id']);
  const heldId = held.body.request_id as string;
  const pending = (await control('GET', '/whatsapp/groups/creations')).body.creations;
  assert.equal(pending.find((c: any) => c.requestId === heldId).outcome, 'pending');
  assert.equal(hooks('group_lifecycle_update', (g) => g.request_id === heldId).length, 0, 'no webhook while pending');
  assert.equal((await control('POST', `/whatsapp/groups/creations/${heldId}/complete`)).status, 202);
  const [{ item: heldItem }] = await waitHook('group_lifecycle_update', (g) => g.request_id === heldId);
  assert.equal(heldItem.type, 'group_create');
  assert.equal(heldItem.subject, 'Held');
  const done = (await control('GET', '/whatsapp/groups/creations')).body.creations;
  assert.equal(done.find((c: any) => c.requestId === heldId).outcome, 'created');
  assert.equal((await control('POST', `/whatsapp/groups/creations/${heldId}/complete`)).status, 409, 'only a pending creation completes');
  assert.equal((await control('POST', '/whatsapp/groups/creations/nope/complete')).status, 404);

  // Unheld, the webhook comes by itself once createDelayMs has passed.
  const started = Date.now();
  const res = await graph('POST', `/${pn}/groups`, {
    messaging_product: 'whatsapp',
    subject: '  Tea club  ',
    description: 'Weekly tastings',
    join_approval_mode: 'approval_required',
  });
  assert.equal(res.status, 200);
  assert.deepEqual(Object.keys(res.body).sort(), ['messaging_product', 'request_id']);
  assert.equal(res.body.messaging_product, 'whatsapp');

  const [{ item, value, raw }] = await waitHook('group_lifecycle_update', (g) => g.request_id === res.body.request_id);
  assert.ok(raw.at - started >= CREATE_DELAY_MS - 5, 'the webhook comes a moment after the answer');
  assert.ok(signedByMeta(raw), 'X-Hub-Signature-256 over the raw body with the app secret');
  assert.equal(raw.json.object, 'whatsapp_business_account');
  assert.equal(value.metadata.phone_number_id, pn);
  assert.equal(item.type, 'group_create');
  assert.equal(item.subject, 'Tea club', 'the subject is trimmed');
  assert.equal(item.description, 'Weekly tastings');
  assert.equal(item.join_approval_mode, 'approval_required');
  assert.match(item.invite_link, /^https:\/\/chat\.whatsapp\.com\/[A-Za-z0-9_-]{22}$/);
  assert.match(item.group_id, /^[A-Za-z0-9_-]+$/);
  assert.doesNotMatch(item.group_id, /^\d+$/);
  assert.match(item.timestamp, /^\d{10}$/);
  assert.equal(item.errors, undefined);
  const info = await graph('GET', `/${item.group_id}`);
  assert.equal(info.status, 200);
  assert.equal(info.body.subject, 'Tea club');
});

test('create validates subject, description, join_approval_mode, messaging_product and the token', async () => {
  const pn = number();
  const create = (body: Record<string, unknown>, token?: string) => graph('POST', `/${pn}/groups`, body, token);
  const code = async (body: Record<string, unknown>) => {
    const r = await create(body);
    return [r.status, r.body.error?.code];
  };
  const ok = { messaging_product: 'whatsapp', subject: 'S' };
  assert.deepEqual(await code({ messaging_product: 'whatsapp' }), [400, 131008]);
  assert.deepEqual(await code({ ...ok, subject: 'x'.repeat(129) }), [400, 131009]);
  assert.deepEqual(await code({ ...ok, subject: '   ' }), [400, 131009]);
  assert.deepEqual(await code({ ...ok, subject: 7 }), [400, 100]);
  assert.deepEqual(await code({ ...ok, description: 'd'.repeat(2049) }), [400, 131009]);
  assert.deepEqual(await code({ ...ok, join_approval_mode: 'anyone' }), [400, 131009]);
  assert.deepEqual(await code({ subject: 'S' }), [400, 131008]);
  assert.deepEqual(await code({ ...ok, messaging_product: 'sms' }), [400, 100]);
  const anon = await create(ok, 'wrong');
  assert.deepEqual([anon.status, anon.body.error.code], [401, 190]);
  const valid = await create(ok);
  assert.equal(valid.status, 200, 'a valid body still passes');
  const edge = await create({ ...ok, subject: ` ${'x'.repeat(128)} `, description: 'd'.repeat(2048) });
  assert.equal(edge.status, 200, '128 characters after trimming, 2048 of description');
  const rejections = (await control('GET', '/rejections?provider=whatsapp')).body.rejections;
  assert.ok(rejections.some((r: any) => r.code === 131009 && r.to === pn));
});

test('131215: a number marked ineligible, or one whose id ends in 131215, cannot use the Groups API', async () => {
  const pattern = '1065003131215';
  const r1 = await graph('POST', `/${pattern}/groups`, { messaging_product: 'whatsapp', subject: 'S' });
  assert.deepEqual([r1.status, r1.body.error.code], [400, 131215]);
  assert.match(r1.body.error.error_data.details, /not eligible/);

  const pn = number();
  const { groupId } = await createGroup(pn);
  const marked = await control('POST', '/whatsapp/groups/eligibility', { phone_number_id: pn, eligible: false });
  assert.deepEqual(marked.body, { phone_number_id: pn, eligible: false });
  const r2 = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'S' });
  assert.equal(r2.body.error.code, 131215);
  assert.equal((await graph('GET', `/${groupId}`)).body.error.code, 131215, 'calls on its groups too');
  const send = await graph('POST', `/${pn}/messages`, {
    messaging_product: 'whatsapp',
    recipient_type: 'group',
    to: groupId,
    text: { body: 'x' },
  });
  assert.equal(send.body.error.code, 131215);
  await control('POST', '/whatsapp/groups/eligibility', { phone_number_id: pn, eligible: true });
  assert.equal((await graph('GET', `/${groupId}`)).status, 200);
  assert.equal((await control('POST', '/whatsapp/groups/eligibility', { phone_number_id: 'x', eligible: true })).status, 400);
});

test('faults: creation that fails by webhook, creation that hangs, a sync group error; 1:1 sends never take them', async () => {
  const pn = number();
  const armed = await control('POST', '/faults', {
    provider: 'whatsapp',
    kind: 'group_create_fail',
    to: pn,
    code: 131214,
    message: 'too many',
  });
  assert.equal(armed.status, 201);
  assert.equal((await control('POST', '/faults', { provider: 'sms', kind: 'group_create_hang' })).status, 400);

  const oneToOne = await graph('POST', `/${pn}/messages`, {
    messaging_product: 'whatsapp',
    to: '255700000099',
    type: 'template',
    template: { name: 't', language: { code: 'en' } },
  });
  assert.equal(oneToOne.status, 200, 'a 1:1 send does not consume a group fault');

  const failing = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'Doomed' });
  assert.equal(failing.status, 200, 'the failure comes later, by webhook');
  const [{ item, raw }] = await waitHook('group_lifecycle_update', (g) => g.request_id === failing.body.request_id);
  assert.ok(signedByMeta(raw));
  assert.equal(item.type, 'group_create');
  assert.equal(item.group_id, undefined);
  assert.equal(item.invite_link, undefined);
  assert.equal(item.errors[0].code, 131214);
  assert.equal(item.errors[0].error_data.details, 'too many');

  await control('POST', '/faults', { provider: 'whatsapp', kind: 'group_create_hang', to: pn });
  const hanging = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'Limbo' });
  assert.equal(hanging.status, 200);
  await sleep(CREATE_DELAY_MS * 3);
  assert.equal(hooks('group_lifecycle_update', (g) => g.request_id === hanging.body.request_id).length, 0, 'no webhook ever');
  const creations = (await control('GET', '/whatsapp/groups/creations')).body.creations;
  assert.equal(creations.find((c: any) => c.requestId === hanging.body.request_id).outcome, 'hanging');
  assert.equal(creations.find((c: any) => c.requestId === failing.body.request_id).outcome, 'failed');

  await control('POST', '/faults', { provider: 'whatsapp', kind: 'group_error', to: pn, code: 131208, retryAfter: 3 });
  const limited = await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'S' });
  assert.deepEqual([limited.status, limited.body.error.code], [429, 131208]);
  await control('POST', '/faults', { provider: 'whatsapp', kind: 'group_error', to: pn });
  const outage = await graph('GET', `/${pn}/groups`);
  assert.deepEqual([outage.status, outage.body.error.code], [500, 131000]);
  assert.equal((await graph('POST', `/${pn}/groups`, { messaging_product: 'whatsapp', subject: 'S' })).status, 200, 'faults are used up');
});

test('info answers the requested fields; unknown group 131041; numeric ids stay the catalogue API’s', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn, { description: 'D' });
  await join(groupId, 1);
  const all = await graph('GET', `/${groupId}`);
  assert.equal(all.status, 200);
  assert.equal(all.body.id, groupId);
  assert.deepEqual(all.body.participants, [{ wa_id: user(1) }]);
  assert.equal(all.body.total_participant_count, 1);
  assert.equal(all.body.join_approval_mode, 'auto_approve');
  assert.equal(all.body.suspended, false);
  assert.match(all.body.creation_timestamp, /^\d{10}$/);
  const some = await graph('GET', `/${groupId}?fields=subject,description`);
  assert.deepEqual(some.body, { messaging_product: 'whatsapp', id: groupId, subject: 'Tea club', description: 'D' });
  const unknownField = await graph('GET', `/${groupId}?fields=subject,owner`);
  assert.deepEqual([unknownField.status, unknownField.body.error.code], [400, 100]);
  const unknown = await graph('GET', `/Y2FwaV9ncm91cDpub3BlOjE`);
  assert.deepEqual([unknown.status, unknown.body.error.code], [400, 131041]);
  const catalogue = await graph('GET', '/123456789012345');
  assert.equal(catalogue.body.error.type, 'GraphMethodException', 'a numeric id is answered by the catalogue routes');
  const anon = await graph('GET', `/${groupId}`, undefined, 'wrong');
  assert.equal(anon.status, 401);
});

test('update changes subject and description and confirms with group_settings_update', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  const r = await graph('POST', `/${groupId}`, { messaging_product: 'whatsapp', subject: ' Coffee club ', description: 'New' });
  assert.deepEqual([r.status, r.body], [200, { success: true }]);
  const [{ item, raw }] = await waitHook('group_settings_update', (g) => g.group_id === groupId);
  assert.ok(signedByMeta(raw));
  assert.equal(item.type, 'group_settings_update');
  assert.deepEqual(item.group_subject, { text: 'Coffee club', update_successful: true });
  assert.deepEqual(item.group_description, { text: 'New', update_successful: true });
  assert.equal((await graph('GET', `/${groupId}?fields=subject`)).body.subject, 'Coffee club');
  assert.equal((await graph('POST', `/${groupId}`, { messaging_product: 'whatsapp', subject: 'x'.repeat(129) })).body.error.code, 131009);
  assert.equal((await graph('POST', `/${groupId}`, { messaging_product: 'whatsapp' })).body.error.code, 131008);
  assert.equal(
    (await graph('POST', `/${groupId}`, { messaging_product: 'whatsapp', description: 'd'.repeat(2049) })).body.error.code,
    131009,
  );
});

test('invite link: get, reset (the old link stops working), join by link', async () => {
  const pn = number();
  const { groupId, link } = await createGroup(pn);
  const got = await graph('GET', `/${groupId}/invite_link`);
  assert.deepEqual(got.body, { messaging_product: 'whatsapp', invite_link: link });
  const reset = await graph('POST', `/${groupId}/invite_link`, { messaging_product: 'whatsapp' });
  assert.equal(reset.status, 200);
  assert.notEqual(reset.body.invite_link, link);
  assert.equal((await graph('GET', `/${groupId}/invite_link`)).body.invite_link, reset.body.invite_link);
  const old = await control('POST', '/whatsapp/groups/join', { invite_link: link, from: user(1) });
  assert.equal(old.status, 410);
  const unknown = await control('POST', '/whatsapp/groups/join', { invite_link: 'https://chat.whatsapp.com/nope', from: user(1) });
  assert.equal(unknown.status, 404);
  const joined = await control('POST', '/whatsapp/groups/join', { invite_link: reset.body.invite_link, from: `+${user(1)}` });
  assert.equal(joined.body.outcome, 'joined');
  assert.equal(joined.body.webhook.delivered, true);
});

test('auto_approve: a user joining by link is added (group_participants_add); at most 8 with the business', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  const first = await join(groupId, 1);
  assert.deepEqual([first.outcome, first.wa_id], ['joined', user(1)]);
  const [{ item, raw }] = await waitHook('group_participants_update', (g) => g.group_id === groupId);
  assert.ok(signedByMeta(raw));
  assert.equal(item.type, 'group_participants_add');
  assert.equal(item.reason, 'invite_link');
  assert.deepEqual(item.added_participants, [{ wa_id: user(1) }]);
  const again = await control('POST', '/whatsapp/groups/join', { group_id: groupId, from: user(1) });
  assert.equal(again.status, 409);
  for (let n = 2; n <= 7; n++) await join(groupId, n);
  const eighth = await control('POST', '/whatsapp/groups/join', { group_id: groupId, from: user(8) });
  assert.deepEqual([eighth.status, eighth.body.code], [409, 131204]);
  assert.equal((await graph('GET', `/${groupId}?fields=total_participant_count`)).body.total_participant_count, 7);
});

test('approval_required: join requests are created, listed, revoked, approved and rejected per item', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn, { join_approval_mode: 'approval_required' });
  const asked = await join(groupId, 1);
  assert.equal(asked.outcome, 'join_requested');
  const [{ item }] = await waitHook('group_participants_update', (g) => g.group_id === groupId && g.type === 'group_join_request_created');
  assert.deepEqual([item.join_request_id, item.wa_id], [asked.join_request_id, user(1)]);
  const second = (await control('POST', '/whatsapp/groups/join-requests', { group_id: groupId, from: user(2) })).body;
  const third = (await control('POST', '/whatsapp/groups/join-requests', { group_id: groupId, from: user(3) })).body;
  const fourth = (await control('POST', '/whatsapp/groups/join-requests', { group_id: groupId, from: user(4) })).body;

  const listed = await graph('GET', `/${groupId}/join_requests`);
  assert.deepEqual(
    listed.body.data.map((r: any) => [r.join_request_id, r.wa_id]),
    [asked, second, third, fourth].map((r) => [r.join_request_id, r.wa_id]),
  );
  assert.match(listed.body.data[0].creation_timestamp, /^\d{10}$/);
  const paged = await graph('GET', `/${groupId}/join_requests?limit=3`);
  assert.equal(paged.body.data.length, 3);
  assert.ok(paged.body.paging.next);
  const rest = await graph('GET', `/${groupId}/join_requests?limit=3&after=${paged.body.paging.cursors.after}`);
  assert.deepEqual(
    rest.body.data.map((r: any) => r.wa_id),
    [user(4)],
  );
  assert.equal(rest.body.paging.next, undefined);
  assert.equal((await graph('GET', `/${groupId}/join_requests?after=garbage`)).body.error.code, 131059);

  const revoked = await control('POST', '/whatsapp/groups/join-requests/revoke', { group_id: groupId, from: user(4) });
  assert.equal(revoked.body.outcome, 'revoked');
  await waitHook(
    'group_participants_update',
    (g) => g.group_id === groupId && g.type === 'group_join_request_revoked' && g.wa_id === user(4),
  );

  const approve = await graph('POST', `/${groupId}/join_requests`, {
    messaging_product: 'whatsapp',
    join_requests: [asked.join_request_id, 'nope'],
  });
  assert.equal(approve.status, 206);
  assert.deepEqual(approve.body.approved_join_requests, [asked.join_request_id]);
  assert.equal(approve.body.failed_join_requests[0].join_request_id, 'nope');
  assert.equal(approve.body.failed_join_requests[0].errors[0].code, 131213);
  assert.equal(approve.body.errors[0].code, 131201);
  const [{ item: added }] = await waitHook(
    'group_participants_update',
    (g) => g.group_id === groupId && g.type === 'group_participants_add',
  );
  assert.deepEqual(added.added_participants, [{ wa_id: user(1) }]);

  const none = await graph('POST', `/${groupId}/join_requests`, { messaging_product: 'whatsapp', join_requests: ['nope'] });
  assert.deepEqual([none.status, none.body.error.code], [400, 131213]);
  assert.equal(none.body.failed_join_requests[0].join_request_id, 'nope');
  assert.equal((await graph('POST', `/${groupId}/join_requests`, { messaging_product: 'whatsapp' })).body.error.code, 131008);
  assert.equal(
    (await graph('POST', `/${groupId}/join_requests`, { messaging_product: 'whatsapp', join_requests: [] })).body.error.code,
    131009,
  );

  const reject = await graph('DELETE', `/${groupId}/join_requests`, {
    messaging_product: 'whatsapp',
    join_requests: [second.join_request_id],
  });
  assert.deepEqual(
    [reject.status, reject.body.rejected_join_requests, reject.body.failed_join_requests],
    [200, [second.join_request_id], []],
  );
  const left = await graph('GET', `/${groupId}/join_requests`);
  assert.deepEqual(
    left.body.data.map((r: any) => r.wa_id),
    [user(3)],
  );
  assert.deepEqual((await graph('GET', `/${groupId}?fields=participants`)).body.participants, [{ wa_id: user(1) }]);
});

test('approving into a full group fails that item with 131204', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  const jr = (await control('POST', '/whatsapp/groups/join-requests', { group_id: groupId, from: user(9) })).body;
  for (let n = 1; n <= 7; n++) await join(groupId, n);
  const r = await graph('POST', `/${groupId}/join_requests`, { messaging_product: 'whatsapp', join_requests: [jr.join_request_id] });
  assert.deepEqual([r.status, r.body.error.code, r.body.failed_join_requests[0].errors[0].code], [400, 131204, 131204]);
});

test('participants: removal per user (131212, 206 with 131201), removed users cannot rejoin, leaving is reported', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  for (const n of [1, 2, 3]) await join(groupId, n);
  const r = await graph('DELETE', `/${groupId}/participants`, {
    messaging_product: 'whatsapp',
    participants: [{ user: `+${user(1)}` }, { user: user(5) }],
  });
  assert.equal(r.status, 206);
  assert.deepEqual(r.body.removed_participants, [{ input: `+${user(1)}`, wa_id: user(1) }]);
  assert.equal(r.body.failed_participants[0].input, user(5));
  assert.equal(r.body.failed_participants[0].errors[0].code, 131212);
  assert.equal(r.body.errors[0].code, 131201);
  const [{ item, raw }] = await waitHook(
    'group_participants_update',
    (g) => g.group_id === groupId && g.type === 'group_participants_remove',
  );
  assert.ok(signedByMeta(raw));
  assert.equal(item.initiated_by, 'business');
  assert.deepEqual(item.removed_participants, [{ input: `+${user(1)}`, wa_id: user(1) }]);
  const rejoin = await control('POST', '/whatsapp/groups/join', { group_id: groupId, from: user(1) });
  assert.equal(rejoin.status, 403);

  const all = await graph('DELETE', `/${groupId}/participants`, { messaging_product: 'whatsapp', participants: [{ user: user(6) }] });
  assert.deepEqual([all.status, all.body.error.code], [400, 131212]);
  const nine = Array.from({ length: 9 }, (_, i) => ({ user: user(i + 1) }));
  assert.equal(
    (await graph('DELETE', `/${groupId}/participants`, { messaging_product: 'whatsapp', participants: nine })).body.error.code,
    131009,
  );
  assert.equal(
    (await graph('DELETE', `/${groupId}/participants`, { messaging_product: 'whatsapp', participants: [] })).body.error.code,
    131009,
  );
  assert.equal((await graph('DELETE', `/${groupId}/participants`, { messaging_product: 'whatsapp' })).body.error.code, 131008);
  const ok = await graph('DELETE', `/${groupId}/participants`, { messaging_product: 'whatsapp', participants: [{ user: user(2) }] });
  assert.deepEqual([ok.status, ok.body.failed_participants], [200, []]);

  const leave = await control('POST', '/whatsapp/groups/leave', { group_id: groupId, from: user(3) });
  assert.equal(leave.body.outcome, 'left');
  const [{ item: left }] = await waitHook('group_participants_update', (g) => g.group_id === groupId && g.initiated_by === 'participant');
  assert.deepEqual(left.removed_participants, [{ wa_id: user(3) }]);
  assert.deepEqual((await graph('GET', `/${groupId}?fields=participants`)).body.participants, []);
  assert.equal((await control('POST', '/whatsapp/groups/leave', { group_id: groupId, from: user(3) })).status, 409);
});

test('group sends: text, media and templates get a wamid and aggregated group statuses; interactive is refused', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  await join(groupId, 1);
  await join(groupId, 2);
  const send = (body: Record<string, unknown>, to = groupId, from = pn) =>
    graph('POST', `/${from}/messages`, { messaging_product: 'whatsapp', recipient_type: 'group', to, ...body });

  const text = await send({ type: 'text', text: { body: 'Hello group' } });
  assert.equal(text.status, 200);
  assert.deepEqual(Object.keys(text.body).sort(), ['messages', 'messaging_product']);
  const wamid = text.body.messages[0].id;
  assert.match(wamid, /^wamid\./);
  const sent = await waitHook('messages', (s) => s.id === wamid && s.status === 'sent');
  assert.equal(sent[0].item.recipient_type, 'group');
  assert.equal(sent[0].item.recipient_id, groupId);
  assert.equal(sent[0].item.pricing.category, 'group_service');
  assert.ok(signedByMeta(sent[0].raw));
  const read = await waitHook('messages', (s) => s.id === wamid && s.status === 'read', 2);
  assert.deepEqual(read.map((r) => r.item.recipient_participant_id).sort(), [user(1), user(2)]);
  assert.equal(read[0].raw, read[1].raw, 'one webhook holds every participant’s status');
  assert.equal(hooks('messages', (s) => s.id === wamid && s.status === 'delivered').length, 2);

  const image = await send({ type: 'image', image: { link: 'https://example.com/a.jpg', caption: 'look' } });
  assert.equal(image.status, 200);
  const template = await send({ type: 'template', template: { name: 'weekly_update', language: { code: 'en' } } });
  assert.deepEqual([template.status, template.body.messages[0].message_status], [200, 'accepted']);
  await waitHook('messages', (s) => s.id === template.body.messages[0].id && s.pricing?.category === 'group_utility');

  const interactive = await send({ type: 'interactive', interactive: { type: 'button', body: { text: 'x' }, action: { buttons: [] } } });
  assert.deepEqual([interactive.status, interactive.body.error.code], [400, 131051]);
  assert.equal((await send({ type: 'reaction', reaction: { message_id: wamid, emoji: '👍' } })).body.error.code, 131051);
  assert.equal((await send({ type: 'text', text: { body: 'x'.repeat(4097) } })).body.error.code, 131009);
  assert.equal((await send({ type: 'text', text: { body: 'x' } }, 'Y2FwaV9ncm91cDpub3BlOjE')).body.error.code, 131041);
  assert.equal((await send({ type: 'text', text: { body: 'x' } }, groupId, number())).body.error.code, 131041, 'another number’s group');
  const oneToOne = await graph('POST', `/${pn}/messages`, {
    messaging_product: 'whatsapp',
    to: user(1),
    type: 'template',
    template: { name: 't', language: { code: 'en' } },
  });
  assert.equal(oneToOne.status, 200, '1:1 sends still go through the messages route');

  const view = (await control('GET', `/whatsapp/groups/${groupId}`)).body;
  assert.deepEqual(
    view.messages.map((m: any) => m.type),
    ['text', 'image', 'template'],
  );
});

test('pins: expiration_days 1..30 required to pin, only messages of the group, at most three pinned', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  await join(groupId, 1);
  const send = (body: Record<string, unknown>) =>
    graph('POST', `/${pn}/messages`, { messaging_product: 'whatsapp', recipient_type: 'group', to: groupId, ...body });
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await send({ type: 'text', text: { body: `m${i}` } })).body.messages[0].id);
  const inbound = await control('POST', '/whatsapp/groups/inbound', { group_id: groupId, from: user(1), text: 'hi' });
  ids.push(inbound.body.wamid);
  const pin = (message_id: string, extra: Record<string, unknown> = { expiration_days: 7 }, type = 'pin') =>
    send({ type: 'pin', pin: { type, message_id, ...extra } });

  assert.deepEqual([(await pin(ids[0], {})).body.error.code], [131008]);
  assert.equal((await pin(ids[0], { expiration_days: 31 })).body.error.code, 131009);
  assert.equal((await pin(ids[0], { expiration_days: 0 })).body.error.code, 131009);
  assert.equal((await pin('wamid.unknown')).body.error.code, 131009);
  assert.equal((await pin(ids[0], {}, 'stick')).body.error.code, 131009);
  assert.equal((await send({ type: 'pin' })).body.error.code, 131008);
  for (const id of ids) {
    const r = await pin(id);
    assert.equal(r.status, 200);
    assert.match(r.body.messages[0].id, /^wamid\./);
  }
  const pins = async () => (await control('GET', `/whatsapp/groups/${groupId}`)).body.pins.map((p: any) => p.messageId);
  assert.deepEqual(await pins(), ids.slice(1), 'a fourth pin unpins the oldest; a participant’s message can be pinned');
  assert.equal((await pin(ids[2], {}, 'unpin')).status, 200);
  assert.deepEqual(await pins(), [ids[1], ids[3]]);
});

test('a participant writing into the group: an inbound messages webhook carrying group_id', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  await join(groupId, 1);
  const r = await control('POST', '/whatsapp/groups/inbound', { group_id: groupId, from: `+${user(1)}`, text: 'Hello all', name: 'Asha' });
  assert.equal(r.status, 200);
  assert.equal(r.body.webhook.delivered, true);
  const [{ item, value, raw }] = await waitHook('messages', (m) => m.id === r.body.wamid);
  assert.ok(signedByMeta(raw));
  assert.deepEqual(item, {
    from: user(1),
    group_id: groupId,
    id: r.body.wamid,
    timestamp: item.timestamp,
    type: 'text',
    text: { body: 'Hello all' },
  });
  assert.deepEqual(value.contacts, [{ profile: { name: 'Asha' }, wa_id: user(1) }]);
  assert.equal(value.metadata.phone_number_id, pn);
  const image = await control('POST', '/whatsapp/groups/inbound', {
    group_id: groupId,
    from: user(1),
    type: 'image',
    image: { id: '1', mime_type: 'image/jpeg' },
  });
  assert.equal(image.body.message.type, 'image');
  const stranger = await control('POST', '/whatsapp/groups/inbound', { group_id: groupId, from: user(5), text: 'x' });
  assert.deepEqual([stranger.status, stranger.body.code], [409, 131212]);
  const callbacks = (await control('GET', `/callbacks?kind=whatsapp.inbound&messageId=${encodeURIComponent(r.body.wamid)}`)).body;
  assert.equal(callbacks.count, 1);
});

test('suspension: group_status_update webhooks, and sends refused with 131207 while suspended', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  const s = await control('POST', '/whatsapp/groups/suspend', { group_id: groupId, suspended: true });
  assert.equal(s.body.suspended, true);
  const [{ item }] = await waitHook('group_status_update', (g) => g.group_id === groupId);
  assert.equal(item.type, 'group_suspend');
  const send = await graph('POST', `/${pn}/messages`, {
    messaging_product: 'whatsapp',
    recipient_type: 'group',
    to: groupId,
    text: { body: 'x' },
  });
  assert.deepEqual([send.status, send.body.error.code], [403, 131207]);
  assert.equal((await graph('GET', `/${groupId}?fields=suspended`)).body.suspended, true);
  await control('POST', '/whatsapp/groups/suspend', { group_id: groupId, suspended: false });
  await waitHook('group_status_update', (g) => g.group_id === groupId && g.type === 'group_suspend_cleared');
});

test('delete: group_delete lifecycle webhook; the group, its link and sends are gone; list pages', async () => {
  const pn = number();
  const a = await createGroup(pn, { subject: 'A' });
  const b = await createGroup(pn, { subject: 'B' });
  const c = await createGroup(pn, { subject: 'C' });
  const first = await graph('GET', `/${pn}/groups?limit=2`);
  assert.deepEqual(
    first.body.data.groups.map((g: any) => g.id),
    [a.groupId, b.groupId],
  );
  assert.match(first.body.data.groups[0].created_at, /^\d{10}$/);
  const second = await graph('GET', `/${pn}/groups?limit=2&after=${first.body.paging.cursors.after}`);
  assert.deepEqual(
    second.body.data.groups.map((g: any) => [g.id, g.subject]),
    [[c.groupId, 'C']],
  );
  assert.equal((await graph('GET', `/${pn}/groups?limit=0`)).body.error.code, 100);

  await join(a.groupId, 1);
  const del = await graph('DELETE', `/${a.groupId}`);
  assert.deepEqual([del.status, del.body], [200, { success: true }]);
  const [{ item, raw }] = await waitHook('group_lifecycle_update', (g) => g.group_id === a.groupId && g.type === 'group_delete');
  assert.ok(signedByMeta(raw));
  assert.match(item.timestamp, /^\d{10}$/);
  assert.equal((await graph('GET', `/${a.groupId}`)).body.error.code, 131041);
  assert.equal((await graph('DELETE', `/${a.groupId}`)).body.error.code, 131041);
  assert.equal((await control('POST', '/whatsapp/groups/join', { invite_link: a.link, from: user(2) })).status, 404);
  const send = await graph('POST', `/${pn}/messages`, {
    messaging_product: 'whatsapp',
    recipient_type: 'group',
    to: a.groupId,
    text: { body: 'x' },
  });
  assert.equal(send.body.error.code, 131041);
  assert.deepEqual(
    (await graph('GET', `/${pn}/groups`)).body.data.groups.map((g: any) => g.id),
    [b.groupId, c.groupId],
  );
  const view = (await control('GET', `/whatsapp/groups?phone_number_id=${pn}`)).body;
  assert.equal(view.count, 3);
  assert.equal(view.groups[0].deleted, true);
});

test('controls refuse bad input; /_sim/reset forgets groups', async () => {
  const pn = number();
  const { groupId } = await createGroup(pn);
  assert.equal((await control('POST', '/whatsapp/groups/join', { from: user(1) })).status, 400);
  assert.equal((await control('POST', '/whatsapp/groups/join', { group_id: groupId, from: '12' })).status, 400);
  assert.equal((await control('POST', '/whatsapp/groups/join', { group_id: 'nope', from: user(1) })).status, 404);
  assert.equal((await control('POST', '/whatsapp/groups/suspend', { group_id: groupId, suspended: 'yes' })).status, 400);
  assert.equal((await control('POST', '/whatsapp/groups/join-requests/revoke', { group_id: groupId, from: user(1) })).status, 404);
  assert.equal((await control('POST', '/whatsapp/groups/config', { createDelayMs: -1 })).status, 400);
  assert.deepEqual((await control('GET', '/whatsapp/groups/config')).body, { createDelayMs: CREATE_DELAY_MS, webhookDelayMs: 5 });
  assert.equal((await control('GET', '/whatsapp/groups/nope')).status, 404);
  await control('POST', '/reset');
  assert.equal((await control('GET', '/whatsapp/groups')).body.count, 0);
  assert.equal((await graph('GET', `/${groupId}`)).body.error.code, 131041);
  assert.deepEqual((await control('GET', '/whatsapp/groups/config')).body.createDelayMs, CREATE_DELAY_MS, 'the delays survive a reset');
  await control('POST', '/config', { waWebhookUrl: receiver.url });
});
