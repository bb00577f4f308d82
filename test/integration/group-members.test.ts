import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { api, eventually, sim, uniquePhone, type Tenant } from '../support/stack.js';
import { keyWith, waTenant as groupTenant, type WaTenant } from '../support/groups.js';
import { startReceiver } from '../support/receiver.js';
import { createEndpoint } from '../support/webhooks.js';

// Who is in a chat group (issue 15, point 3 for members and point 6 for the participant events):
// invites with per-recipient results and the 8-place limit (the business and pending invitations
// count), the invite-link reset (the simulator refuses the old link), join requests listed from the
// provider's webhooks and approved or rejected per item, participants removed per item, and the
// group.participant_* / group.join_requested events signed to a receiver. Groups are created through
// the API and confirmed by the simulator's Groups API; people join, ask and leave through its controls.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const em = () => orm.em.fork();
const G = '/api/v3/whatsapp/groups';

const waTenant = (opts: { permissions?: string[] } = {}) => groupTenant('78', opts);

interface Row {
  id: string;
  status: string;
  provider_group_id: string | null;
  invite_link: string | null;
  failure_reason: string | null;
}
const row = (id: number) => one<Row>(em(), 'select * from chat_groups where id = ?', [id]);
async function activeGroup(t: WaTenant, body: Record<string, unknown> = {}) {
  const r = await api('POST', G, t.token, { sender_id: t.phoneNumberId, subject: 'Members', ...body });
  assert.equal(r.status, 201, r.text);
  const id = r.body.data.id as number;
  const g = await eventually(
    async () => (await row(id))!,
    (x) => x.status !== 'creating',
    30_000,
    250,
  );
  assert.equal(g.status, 'active', g.failure_reason ?? '');
  return { id, providerGroupId: g.provider_group_id!, inviteLink: g.invite_link! };
}
const participants = (id: number) =>
  many<{ wa_id: string; status: string }>(em(), 'select wa_id, status from chat_group_participants where group_id = ? order by wa_id', [
    id,
  ]);
const events = (t: Tenant, kind: string) =>
  many<{ payload: any }>(em(), 'select payload from events where account_id = ? and kind = ? order by id', [t.accountId, kind]);
const join = (inviteLink: string, from: string) => sim('POST', '/_sim/whatsapp/groups/join', { invite_link: inviteLink, from });
const counts = async (id: number) => {
  const r = await one<{ p: string; j: string }>(
    em(),
    `select (select count(*) from chat_group_participants where group_id = ?) as p,
            (select count(*) from chat_group_join_requests where group_id = ?) as j`,
    [id, id],
  );
  return { participants: Number(r!.p), joinRequests: Number(r!.j) };
};

test('invites: per-recipient results; 7 invitations fill the group (the business is the 8th place); beyond is a failure per recipient', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const five = Array.from({ length: 5 }, () => uniquePhone('2554'));
  const first = await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: [...five, 'not a phone'] });
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(
    first.body.data.successes.map((s: any) => s.recipient),
    five,
  );
  assert.ok(first.body.data.successes.every((s: any) => /^msg_/.test(s.message_uid)));
  assert.deepEqual(
    first.body.data.failures.map((f: any) => f.recipient),
    ['not a phone'],
  );

  // Two places are left: the third recipient of the next call is refused on its own.
  const three = Array.from({ length: 3 }, () => uniquePhone('2554'));
  const second = await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: three, template: 'group_invite_link' });
  assert.equal(second.status, 200, second.text);
  assert.deepEqual(
    second.body.data.successes.map((s: any) => s.recipient),
    three.slice(0, 2),
  );
  assert.equal(second.body.data.failures.length, 1);
  assert.equal(second.body.data.failures[0].recipient, three[2]);
  assert.match(second.body.data.failures[0].reason, /full/i);
  const invited = await participants(g.id);
  assert.equal(invited.filter((p) => p.status === 'invited').length, 7);

  // An eighth person: a failure, not a refusal of the request.
  const eighth = await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: [uniquePhone('2554')] });
  assert.equal(eighth.status, 200, eighth.text);
  assert.equal(eighth.body.data.successes.length, 0);
  assert.equal(eighth.body.data.failures.length, 1);

  // Someone already invited is sent the link again without taking another place.
  const again = await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: [five[0]] });
  assert.equal(again.body.data.successes.length, 1);
  assert.equal((await participants(g.id)).length, 7);

  // A withdrawn invitation frees its place.
  const withdrawn = await api('DELETE', `${G}/${g.id}/participants`, t.token, { participants: [five[1]] });
  assert.equal(withdrawn.status, 200, withdrawn.text);
  assert.equal(withdrawn.body.data.successes[0].status, 'invitation_withdrawn');
  const after1 = await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: [three[2]] });
  assert.equal(after1.body.data.successes.length, 1, after1.text);

  // Bad input is refused whole and writes nothing.
  const before = await counts(g.id);
  const eight = Array.from({ length: 8 }, () => uniquePhone('2554'));
  for (const body of [
    { recipients: eight },
    { recipients: [] },
    {},
    { recipients: [five[0], five[0]] },
    { recipients: ['x'], template: 'Bad Name' },
  ]) {
    const r = await api('POST', `${G}/${g.id}/invites`, t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
  }
  assert.deepEqual(await counts(g.id), before);
});

test('invite-link reset: a new link is stored; the old one no longer lets anyone join; the new one does (group.participant_joined)', async () => {
  const t = await waTenant();
  const receiver = await startReceiver();
  try {
    const ep = await createEndpoint(t.accountId, receiver.url, ['group.*']);
    const g = await activeGroup(t);
    const r = await api('POST', `${G}/${g.id}/invite-link/reset`, t.token, {});
    assert.equal(r.status, 200, r.text);
    const link = r.body.data.invite_link as string;
    assert.ok(link && link !== g.inviteLink);
    assert.equal(r.body.data.id, g.id, 'the answer is the group');
    assert.equal((await row(g.id))!.invite_link, link);

    const user = uniquePhone('2557');
    const old = await join(g.inviteLink, user);
    assert.equal(old.status, 410, old.text);
    const ok = await join(link, user);
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.outcome, 'joined');
    const joined = await eventually(
      () => participants(g.id),
      (p) => p.some((x) => x.wa_id === user.slice(1) && x.status === 'joined'),
    );
    assert.ok(joined.some((x) => x.wa_id === user.slice(1) && x.status === 'joined'));
    const hook = await eventually(
      async () => receiver.got.filter((x) => x.json?.event === 'group.participant_joined'),
      (x) => x.length === 1,
    );
    assert.equal(hook.length, 1);
    assert.equal(hook[0].headers['x-signature'], crypto.createHmac('sha256', ep.secret).update(hook[0].body).digest('hex'));
    assert.equal(hook[0].json.group_id, g.id);
    assert.equal(hook[0].json.wa_id, user.slice(1));

    // A participant leaving: left, group.participant_left.
    const left = await sim('POST', '/_sim/whatsapp/groups/leave', { group_id: g.providerGroupId, from: user });
    assert.equal(left.status, 200, left.text);
    const gone = await eventually(
      () => participants(g.id),
      (p) => p.some((x) => x.wa_id === user.slice(1) && x.status === 'left'),
    );
    assert.ok(gone.some((x) => x.wa_id === user.slice(1) && x.status === 'left'));
    const leftHook = await eventually(
      async () => receiver.got.filter((x) => x.json?.event === 'group.participant_left'),
      (x) => x.length === 1,
    );
    assert.equal(leftHook.length, 1);
    assert.equal(leftHook[0].json.wa_id, user.slice(1));
  } finally {
    await receiver.close();
  }
});

test('join requests: listed from the provider’s webhooks, approved and rejected per item, unknown ids fail per item', async () => {
  const t = await waTenant();
  const receiver = await startReceiver();
  try {
    await createEndpoint(t.accountId, receiver.url, ['group.join_requested']);
    const g = await activeGroup(t, { join_approval_mode: 'approval_required' });
    const [a, b, c] = [uniquePhone('2557'), uniquePhone('2557'), uniquePhone('2557')];
    const ids: string[] = [];
    for (const who of [a, b, c]) {
      const r = await sim('POST', '/_sim/whatsapp/groups/join', { invite_link: g.inviteLink, from: who });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.body.outcome, 'join_requested');
      ids.push(r.body.join_request_id);
    }
    const list = await api('GET', `${G}/${g.id}/join-requests`, t.token);
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.data.join_requests.map((x: any) => [x.join_request_id, x.wa_id, x.status]),
      [a, b, c].map((who, i) => [ids[i], who.slice(1), 'pending']),
    );
    assert.equal((await events(t, 'group.join_requested')).length, 3);
    const hooks = await eventually(
      async () => receiver.got.filter((x) => x.json?.event === 'group.join_requested'),
      (x) => x.length === 3,
    );
    assert.equal(hooks.length, 3);

    const approve = await api('POST', `${G}/${g.id}/join-requests/approve`, t.token, { join_requests: [ids[0], 'no-such-request'] });
    assert.equal(approve.status, 200, approve.text);
    assert.deepEqual(
      approve.body.data.successes.map((s: any) => [s.join_request_id, s.status]),
      [[ids[0], 'approved']],
    );
    assert.deepEqual(
      approve.body.data.failures.map((f: any) => f.join_request_id),
      ['no-such-request'],
    );
    // The provider reports the join; then the person is a participant.
    const joined = await eventually(
      () => participants(g.id),
      (p) => p.some((x) => x.wa_id === a.slice(1) && x.status === 'joined'),
    );
    assert.ok(joined.some((x) => x.wa_id === a.slice(1) && x.status === 'joined'));

    const reject = await api('POST', `${G}/${g.id}/join-requests/reject`, t.token, { join_requests: [ids[1]] });
    assert.equal(reject.status, 200, reject.text);
    assert.deepEqual(
      reject.body.data.successes.map((s: any) => [s.join_request_id, s.status]),
      [[ids[1], 'rejected']],
    );
    // Approving what is decided already, or only unknown ids: failures per item, nothing asked of the provider.
    const stale = await api('POST', `${G}/${g.id}/join-requests/approve`, t.token, { join_requests: [ids[1], 'nope'] });
    assert.equal(stale.status, 200, stale.text);
    assert.equal(stale.body.data.successes.length, 0);
    assert.equal(stale.body.data.failures.length, 2);

    const revoked = await sim('POST', '/_sim/whatsapp/groups/join-requests/revoke', {
      group_id: g.providerGroupId,
      join_request_id: ids[2],
    });
    assert.equal(revoked.status, 200, revoked.text);
    const after1 = await api('GET', `${G}/${g.id}/join-requests`, t.token);
    assert.deepEqual(after1.body.data.join_requests, []);
    const statuses = await many<{ join_request_id: string; status: string }>(
      em(),
      'select join_request_id, status from chat_group_join_requests where group_id = ? order by id',
      [g.id],
    );
    assert.deepEqual(
      statuses.map((s) => s.status),
      ['approved', 'rejected', 'revoked'],
    );

    for (const body of [{ join_requests: [] }, {}, { join_requests: [''] }, { join_requests: 'x' }]) {
      const r = await api('POST', `${G}/${g.id}/join-requests/approve`, t.token, body);
      assert.equal(r.status, 422, r.text);
    }
  } finally {
    await receiver.close();
  }
});

test('participants removal: per item; removed at the provider with one group.participant_removed; 9 participants is 422', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const [a, b] = [uniquePhone('2557'), uniquePhone('2557')];
  for (const who of [a, b]) assert.equal((await join(g.inviteLink, who)).status, 200);
  await eventually(
    () => participants(g.id),
    (p) => p.filter((x) => x.status === 'joined').length === 2,
  );
  const stranger = uniquePhone('2557');
  const r = await api('DELETE', `${G}/${g.id}/participants`, t.token, { participants: [a, stranger, 'abc'] });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(
    r.body.data.successes.map((s: any) => [s.participant, s.status]),
    [[a, 'removed']],
  );
  assert.deepEqual(
    r.body.data.failures.map((f: any) => f.participant),
    [stranger, 'abc'],
  );
  const simGroup = await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(g.providerGroupId)}`);
  assert.ok(simGroup.body.removed.includes(a.slice(1)));
  // Our call and the provider's webhook that follows it: one event.
  await new Promise((res) => setTimeout(res, 1500));
  const removed = await events(t, 'group.participant_removed');
  assert.equal(removed.length, 1);
  assert.equal(removed[0].payload.wa_id, a.slice(1));
  // A removed person cannot rejoin through the link.
  assert.equal((await join(g.inviteLink, a)).status, 403);

  const before = await counts(g.id);
  const nine = Array.from({ length: 9 }, () => uniquePhone('2557'));
  assert.equal((await api('DELETE', `${G}/${g.id}/participants`, t.token, { participants: nine })).status, 422);
  assert.equal((await api('DELETE', `${G}/${g.id}/participants`, t.token, { participants: [] })).status, 422);
  assert.deepEqual(await counts(g.id), before);
});

test('permissions, isolation and states: view reads, manage changes, invites need send; another account’s group is 404; creating is 409', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const viewer = await keyWith(t, ['communications.groups.view']);
  const manager = await keyWith(t, ['communications.groups.view', 'communications.groups.manage']);
  const sender = await keyWith(t, ['communications.groups.manage', 'communications.send']);
  const someone = uniquePhone('2554');

  assert.equal((await api('GET', `${G}/${g.id}/join-requests`, viewer)).status, 200);
  assert.equal((await api('POST', `${G}/${g.id}/invite-link/reset`, viewer, {})).status, 403);
  assert.equal((await api('POST', `${G}/${g.id}/join-requests/approve`, viewer, { join_requests: ['x'] })).status, 403);
  assert.equal((await api('DELETE', `${G}/${g.id}/participants`, viewer, { participants: [someone] })).status, 403);
  const noSend = await api('POST', `${G}/${g.id}/invites`, manager, { recipients: [someone] });
  assert.equal(noSend.status, 403, noSend.text);
  assert.equal((await api('POST', `${G}/${g.id}/invites`, viewer, { recipients: [someone] })).status, 403);
  assert.equal((await participants(g.id)).length, 0, 'nothing written on refusals');
  assert.equal((await api('POST', `${G}/${g.id}/invite-link/reset`, manager, {})).status, 200);
  const sent = await api('POST', `${G}/${g.id}/invites`, sender, { recipients: [someone] });
  assert.equal(sent.status, 200, sent.text);
  assert.equal(sent.body.data.successes.length, 1);
  assert.equal((await api('GET', `${G}/${g.id}/join-requests`, t.legacyToken)).status, 403);

  const other = await waTenant();
  for (const [method, path, body] of [
    ['GET', 'join-requests', undefined],
    ['POST', 'invites', { recipients: [uniquePhone('2554')] }],
    ['POST', 'invite-link/reset', {}],
    ['POST', 'join-requests/approve', { join_requests: ['x'] }],
    ['POST', 'join-requests/reject', { join_requests: ['x'] }],
    ['DELETE', 'participants', { participants: [someone] }],
  ] as const) {
    const r = await api(method, `${G}/${g.id}/${path}`, other.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
    assert.equal((await api(method, `${G}/999999999999/${path}`, t.token, body)).status, 404);
    assert.equal((await api(method, `${G}/abc/${path}`, t.token, body)).status, 404);
  }

  // A group still creating (its row as the create leaves it) cannot be used yet: 409, nothing written.
  const creating = await one<{ id: string }>(
    em(),
    `insert into chat_groups (account_id, sender_phone_number_id, subject, status, invitees, created_at, updated_at)
     values (?, ?, 'Not yet', 'creating', '[]'::jsonb, now(), now()) returning id`,
    [t.accountId, t.phoneNumberId],
  );
  for (const [method, path, body] of [
    ['POST', 'invites', { recipients: [uniquePhone('2554')] }],
    ['POST', 'invite-link/reset', {}],
    ['POST', 'join-requests/approve', { join_requests: ['x'] }],
    ['DELETE', 'participants', { participants: [someone] }],
  ] as const) {
    const r = await api(method, `${G}/${creating!.id}/${path}`, t.token, body);
    assert.equal(r.status, 409, `${method} ${path}: ${r.text}`);
    assert.ok(r.body.message, 'v3 envelope');
  }
  assert.deepEqual(await counts(Number(creating!.id)), { participants: 0, joinRequests: 0 });
});

// The provider calls of this file run in the chat-group change workflow (docs/decisions.md, "Chat
// groups: member and pin calls in the change workflow"): a refusal armed with the simulator's
// `group_error` fault on the group's number answers 502 in the v3 envelope and changes nothing here
// or at the provider; an outage (HTTP 500) is retried by the activity and the call succeeds.
async function refuseNextGroupCall(t: WaTenant, code = 131207) {
  const r = await sim('POST', '/_sim/faults', { provider: 'whatsapp', kind: 'group_error', to: t.phoneNumberId, code });
  assert.equal(r.status, 201, r.text);
}
const simGroupOf = async (providerGroupId: string) =>
  (await sim('GET', `/_sim/whatsapp/groups/${encodeURIComponent(providerGroupId)}`)).body;
function assertRefused(r: { status: number; text: string; body: any }) {
  assert.equal(r.status, 502, r.text);
  assert.equal(r.body.status, 'error', 'v3 envelope');
  assert.equal(r.body.reason, 'provider_refused');
  assert.match(r.body.message, /refused.*131207/);
}

test('invite-link reset refused by the provider (group_error): 502, the stored link and the provider’s link unchanged', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const before = await simGroupOf(g.providerGroupId);
  await refuseNextGroupCall(t);
  assertRefused(await api('POST', `${G}/${g.id}/invite-link/reset`, t.token, {}));
  assert.equal((await row(g.id))!.invite_link, g.inviteLink);
  assert.equal((await simGroupOf(g.providerGroupId)).inviteLink, before.inviteLink);
  assert.equal((await join(g.inviteLink, uniquePhone('2557'))).status, 200, 'the old link still works');

  // An outage (HTTP 500) is retried by the activity: the reset goes through.
  await refuseNextGroupCall(t, 131000);
  const ok = await api('POST', `${G}/${g.id}/invite-link/reset`, t.token, {});
  assert.equal(ok.status, 200, ok.text);
  assert.notEqual(ok.body.data.invite_link, g.inviteLink);
  assert.equal((await row(g.id))!.invite_link, ok.body.data.invite_link);
});

for (const decision of ['approve', 'reject'] as const) {
  test(`join requests ${decision} refused by the provider (group_error): 502, the requests stay pending here and there`, async () => {
    const t = await waTenant();
    const g = await activeGroup(t, { join_approval_mode: 'approval_required' });
    const asked = await sim('POST', '/_sim/whatsapp/groups/join', { invite_link: g.inviteLink, from: uniquePhone('2557') });
    assert.equal(asked.body.outcome, 'join_requested', asked.text);
    const jr = asked.body.join_request_id as string;
    await eventually(
      () => api('GET', `${G}/${g.id}/join-requests`, t.token),
      (r) => r.body.data.join_requests.length === 1,
    );
    await refuseNextGroupCall(t);
    assertRefused(await api('POST', `${G}/${g.id}/join-requests/${decision}`, t.token, { join_requests: [jr] }));
    const list = await api('GET', `${G}/${g.id}/join-requests`, t.token);
    assert.deepEqual(
      list.body.data.join_requests.map((x: any) => [x.join_request_id, x.status]),
      [[jr, 'pending']],
    );
    assert.deepEqual(
      (await simGroupOf(g.providerGroupId)).joinRequests.map((x: any) => x.id),
      [jr],
      'still pending at the provider',
    );
    assert.equal((await participants(g.id)).length, 0);
  });
}

test('participants removal refused by the provider (group_error): 502, the member stays, the invitation beside it is not withdrawn', async () => {
  const t = await waTenant();
  const g = await activeGroup(t);
  const member = uniquePhone('2557');
  assert.equal((await join(g.inviteLink, member)).status, 200);
  await eventually(
    () => participants(g.id),
    (p) => p.some((x) => x.wa_id === member.slice(1) && x.status === 'joined'),
  );
  const invitee = uniquePhone('2554');
  assert.equal((await api('POST', `${G}/${g.id}/invites`, t.token, { recipients: [invitee] })).status, 200);
  const before = await participants(g.id);
  await refuseNextGroupCall(t);
  assertRefused(await api('DELETE', `${G}/${g.id}/participants`, t.token, { participants: [member, invitee] }));
  assert.deepEqual(await participants(g.id), before);
  assert.ok(!(await simGroupOf(g.providerGroupId)).removed.includes(member.slice(1)));
  assert.equal((await events(t, 'group.participant_removed')).length, 0);
});
