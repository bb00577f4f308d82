import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { scheduledPostWorkflowId } from '../../workflows/posts/scheduled-post.starter.js';
import { api, eventually, newTenant, sim, type Tenant } from '../support/stack.js';
import { keyWith } from '../support/groups.js';

// Social posts end to end (issue 29, points 3, 4, 5 and 7; docs/posts.md): connections per account
// and platform, drafts, a schedule held by the post's workflow (rescheduled, cancelled, cut short by
// publish now), publishing through the simulator's Facebook Page feed and Instagram container then
// publish, each platform's status and post id, refusals with the platform's reason (an expired token,
// a container that failed, the daily publishing limit), post.published / post.failed in the outbox;
// bad input refused with nothing written; another account's posts never reached.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await sim('POST', '/_sim/social/config', { publishLimit: 50 });
  await orm.close();
  await connection.close();
});
const em = () => orm.em.fork();
const P = '/api/v3/posts';
const HOUR = 3_600_000;
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

let ids = 0;
/** A page and an IG user id no other test uses (the simulator is shared). */
const externalId = (t: Tenant) => `${17_000_000_000 + t.accountId * 100 + ++ids}`;

async function connect(t: Tenant, platform: 'facebook' | 'instagram', token = 'EAAG-page-token-1234') {
  const id = externalId(t);
  const r = await api('PUT', `${P}/connections/${platform}`, t.token, { external_id: id, access_token: token, name: `${platform} page` });
  assert.equal(r.status, 200, r.text);
  return id;
}
async function create(t: Tenant, body: Record<string, unknown>) {
  const r = await api('POST', P, t.token, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
const get = async (t: Tenant, uid: string) => (await api('GET', `${P}/${uid}`, t.token)).body.data;
const settled = (t: Tenant, uid: string) =>
  eventually(
    () => get(t, uid),
    (p) => !['scheduled', 'publishing'].includes(p?.status),
    30_000,
    300,
    `post ${uid} settled`,
  );
const events = (t: Tenant, uid: string) =>
  many<{ kind: string; payload: any }>(
    em(),
    `select kind, payload from events where account_id = ? and payload->>'post_uid' = ? order by occurred_at, id`,
    [t.accountId, uid],
  );
const postCount = async (t: Tenant) =>
  Number((await one<{ n: string }>(em(), 'select count(*) as n from posts where account_id = ?', [t.accountId]))!.n);
const simPosts = async () => (await sim('GET', '/_sim/social/posts')).body.posts as any[];
const IMAGE = { type: 'image', url: 'https://cdn.example.com/p/shoes.jpg' };

test('connections: one per platform, the token never shown back; bad ids and platforms refused', async () => {
  const t = await newTenant();
  const page = await connect(t, 'facebook', 'EAAGsecretpagetoken9876');
  const list = await api('GET', `${P}/connections`, t.token);
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    list.body.data.connections.map((c: any) => [c.platform, c.external_id, c.token_hint]),
    [['facebook', page, 'EAAG…9876']],
  );
  assert.ok(!list.text.includes('secretpagetoken'), 'the token is never answered');
  // A second PUT replaces the page and its token.
  const again = await connect(t, 'facebook');
  assert.equal((await api('GET', `${P}/connections/facebook`, t.token)).body.data.external_id, again);
  const nul = await api('PUT', `${P}/connections/instagram`, t.token, { external_id: '1', access_token: 'abcd\u0000efgh' });
  assert.equal(nul.status, 422, nul.text);
  const bad = await api('PUT', `${P}/connections/facebook`, t.token, { external_id: 'my page', access_token: 'x' });
  assert.equal(bad.status, 422, bad.text);
  assert.deepEqual(Object.keys(bad.body.errors).sort(), ['access_token', 'external_id']);
  assert.equal((await api('PUT', `${P}/connections/myspace`, t.token, { external_id: '1', access_token: 'abcdefgh' })).status, 404);
  assert.equal((await api('GET', `${P}/connections/instagram`, t.token)).status, 404);
  assert.equal((await api('DELETE', `${P}/connections/instagram`, t.token)).status, 404);
});

test('a draft, scheduled, rescheduled, then published now to Facebook and Instagram through the simulator', async () => {
  const t = await newTenant();
  const page = await connect(t, 'facebook');
  const ig = await connect(t, 'instagram');
  const draft = await create(t, {
    text: 'New season shoes #shoes',
    link: 'https://shop.example.com/s',
    media: [IMAGE],
    platforms: ['facebook', 'instagram'],
  });
  assert.deepEqual([draft.status, draft.scheduled_at, draft.workflow_id], ['draft', null, null]);
  assert.ok(/^pst_[A-Za-z0-9]{20}$/.test(draft.uid));
  assert.deepEqual(
    draft.targets.map((x: any) => [x.platform, x.status]),
    [
      ['facebook', 'pending'],
      ['instagram', 'pending'],
    ],
  );

  // Scheduled: the workflow post/<account>/<uid> holds the timer, with the account and post as search attributes.
  const at1 = inMs(HOUR);
  const s1 = await api('POST', `${P}/${draft.uid}/schedule`, t.token, { scheduled_at: at1 });
  assert.equal(s1.status, 200, s1.text);
  assert.equal(s1.body.data.status, 'scheduled');
  assert.equal(s1.body.data.workflow_id, `post/${t.accountId}/${draft.uid}`);
  const h = temporal.workflow.getHandle(scheduledPostWorkflowId(t.accountId, draft.uid));
  const q1 = await eventually(
    () => h.query<any>('state'),
    (s) => s.at === at1,
  );
  assert.equal(q1.status, 'scheduled');
  const d = await h.describe();
  assert.equal(d.searchAttributes.AccountId?.[0], String(t.accountId));
  assert.equal(d.searchAttributes.ResourceId?.[0], draft.uid);

  // Rescheduled: the same workflow, its timer moved.
  const at2 = inMs(2 * HOUR);
  const s2 = await api('POST', `${P}/${draft.uid}/schedule`, t.token, { scheduled_at: at2 });
  assert.equal(s2.status, 200, s2.text);
  assert.equal(new Date(s2.body.data.scheduled_at).toISOString(), at2);
  await eventually(
    () => h.query<any>('state'),
    (s) => s.at === at2,
  );

  // Published now: the timer cut short; each platform's post id recorded.
  const now = await api('POST', `${P}/${draft.uid}/publish`, t.token, {});
  assert.equal(now.status, 200, now.text);
  const done = await settled(t, draft.uid);
  assert.equal(done.status, 'published', JSON.stringify(done));
  assert.ok(done.published_at);
  const fb = done.targets.find((x: any) => x.platform === 'facebook');
  const insta = done.targets.find((x: any) => x.platform === 'instagram');
  assert.match(fb.platform_post_id, new RegExp(`^${page}_\\d+$`));
  assert.match(insta.platform_post_id, /^\d+$/);
  assert.deepEqual([fb.status, fb.error, insta.status, insta.error], ['published', null, 'published', null]);
  assert.deepEqual((await h.result()) as any, { status: 'closed', post_status: 'published', attempts: 1 });

  // What the platforms hold: the Page post by /photos with the caption, the IG media from a finished container.
  const held = await simPosts();
  const fbPost = held.find((p) => p.id === fb.platform_post_id);
  assert.deepEqual([fbPost.owner, fbPost.message, fbPost.mediaUrl], [page, 'New season shoes #shoes', IMAGE.url]);
  const igPost = held.find((p) => p.id === insta.platform_post_id);
  assert.equal(igPost.owner, ig);
  const containers = (await sim('GET', '/_sim/social/containers')).body.containers.filter((c: any) => c.igUser === ig);
  assert.deepEqual(
    containers.map((c: any) => [c.status, c.caption]),
    [['PUBLISHED', 'New season shoes #shoes']],
  );

  const ev = await events(t, draft.uid);
  assert.deepEqual(ev.map((e) => [e.kind, e.payload.platform]).sort(), [
    ['post.published', 'facebook'],
    ['post.published', 'instagram'],
  ]);
  assert.equal(ev.find((e) => e.payload.platform === 'instagram')!.payload.platform_post_id, insta.platform_post_id);

  // A published post is not published, edited or cancelled again.
  assert.equal((await api('POST', `${P}/${draft.uid}/publish`, t.token, {})).status, 409);
  assert.equal((await api('PATCH', `${P}/${draft.uid}`, t.token, { text: 'x' })).status, 409);
  assert.equal((await api('POST', `${P}/${draft.uid}/cancel`, t.token, {})).status, 409);
});

test("failures keep the platform's reason: an expired token (190), a container that failed, the daily limit; partially published", async () => {
  const t = await newTenant();
  await connect(t, 'facebook', 'expired-page-token');
  const ig = await connect(t, 'instagram');
  await sim('POST', '/_sim/social/faults', { kind: 'container_error', owner: ig, subcode: 2207004 });
  const post = await create(t, { text: 'Hello', media: [IMAGE], platforms: ['facebook', 'instagram'] });
  assert.equal((await api('POST', `${P}/${post.uid}/publish`, t.token, {})).status, 200);
  const failed = await settled(t, post.uid);
  assert.equal(failed.status, 'failed', JSON.stringify(failed));
  const fb = failed.targets.find((x: any) => x.platform === 'facebook');
  assert.deepEqual([fb.status, fb.error.code, fb.error.subcode, fb.error.transient], ['failed', '190/463', 463, false]);
  assert.match(fb.error.message, /Session has expired/);
  const insta = failed.targets.find((x: any) => x.platform === 'instagram');
  assert.deepEqual([insta.status, insta.error.code], ['failed', '-1/2207004']);
  const ev = await events(t, post.uid);
  assert.deepEqual(ev.map((e) => [e.kind, e.payload.platform, e.payload.error.code]).sort(), [
    ['post.failed', 'facebook', '190/463'],
    ['post.failed', 'instagram', '-1/2207004'],
  ]);

  // The daily publishing limit (content_publishing_limit, here 1 per 24 h): Facebook takes it, Instagram refuses it.
  await connect(t, 'facebook');
  const ig2 = await connect(t, 'instagram');
  await sim('POST', '/_sim/social/config', { publishLimit: 1 });
  try {
    const first = await create(t, { text: 'one', media: [IMAGE], platforms: ['instagram'] });
    await api('POST', `${P}/${first.uid}/publish`, t.token, {});
    assert.equal((await settled(t, first.uid)).status, 'published');
    const second = await create(t, { text: 'two', media: [IMAGE], platforms: ['facebook', 'instagram'] });
    await api('POST', `${P}/${second.uid}/publish`, t.token, {});
    const partial = await settled(t, second.uid);
    assert.equal(partial.status, 'partially_published', JSON.stringify(partial));
    const refused = partial.targets.find((x: any) => x.platform === 'instagram');
    assert.deepEqual([refused.error.code, refused.error.subcode], ['9/2207042', 2207042]);
    assert.match(refused.error.message, /maximum number of posts/);
    assert.ok((await simPosts()).filter((p) => p.owner === ig2).length === 1, 'one IG post in the day');
  } finally {
    await sim('POST', '/_sim/social/config', { publishLimit: 50 });
  }
});

test('a transient refusal (Graph 500, is_transient) stays pending and is retried on the workflow’s timer, then published', async () => {
  const t = await newTenant();
  const page = await connect(t, 'facebook');
  await sim('POST', '/_sim/social/faults', { kind: 'transient', owner: page, count: 1 });
  const post = await create(t, { text: 'Try again', platforms: ['facebook'] });
  assert.equal((await api('POST', `${P}/${post.uid}/publish`, t.token, {})).status, 200);
  const h = temporal.workflow.getHandle(scheduledPostWorkflowId(t.accountId, post.uid));
  const retrying = await eventually(
    () => h.query<any>('state'),
    (s) => s.status === 'retrying',
    20_000,
    200,
    'the retry timer',
  );
  assert.equal(retrying.attempts, 1);
  assert.ok(Date.parse(retrying.at) - Date.now() > 50_000, 'the next attempt a minute later');
  const pending = await get(t, post.uid);
  assert.equal(pending.status, 'publishing');
  assert.deepEqual(
    [pending.targets[0].status, pending.targets[0].attempts, pending.targets[0].error.code, pending.targets[0].error.transient],
    ['pending', 1, '2', true],
  );
  assert.deepEqual(await events(t, post.uid), [], 'no event for a transient refusal');
  // The timer cut short (the reschedule signal, as publish now sends it): the second attempt publishes.
  await h.signal('reschedule', new Date().toISOString());
  const done = await settled(t, post.uid);
  assert.deepEqual([done.status, done.targets[0].attempts, done.targets[0].error], ['published', 2, null]);
  assert.deepEqual((await h.result()) as any, { status: 'closed', post_status: 'published', attempts: 2 });
});

test('cancel stops a scheduled post (its workflow ends, nothing published); it can be scheduled again; delete', async () => {
  const t = await newTenant();
  await connect(t, 'facebook');
  const post = await create(t, { text: 'Sale on Friday', platforms: ['facebook'], scheduled_at: inMs(HOUR) });
  assert.equal(post.status, 'scheduled');
  const h = temporal.workflow.getHandle(scheduledPostWorkflowId(t.accountId, post.uid));
  const c = await api('POST', `${P}/${post.uid}/cancel`, t.token, {});
  assert.equal(c.status, 200, c.text);
  assert.equal(c.body.data.status, 'cancelled');
  assert.deepEqual((await h.result()) as any, { status: 'cancelled', attempts: 0 });
  assert.equal((await api('POST', `${P}/${post.uid}/cancel`, t.token, {})).status, 409, 'not scheduled any more');
  const again = await api('POST', `${P}/${post.uid}/schedule`, t.token, { scheduled_at: inMs(3 * HOUR) });
  assert.equal(again.status, 200, again.text);
  assert.equal(again.body.data.status, 'scheduled');
  const del = await api('DELETE', `${P}/${post.uid}`, t.token);
  assert.deepEqual([del.status, del.body.data], [200, { uid: post.uid, deleted: true }]);
  assert.equal((await api('GET', `${P}/${post.uid}`, t.token)).status, 404);
  const closed = await temporal.workflow.getHandle(scheduledPostWorkflowId(t.accountId, post.uid)).result();
  assert.equal((closed as any).status, 'cancelled');
});

test('bad input: schedules outside the window, text and media over the platforms’ limits, no connection: 4xx, nothing written', async () => {
  const t = await newTenant();
  await connect(t, 'facebook');
  const before = await postCount(t);
  const refuse = async (body: unknown, field: string, status = 422) => {
    const r = await api('POST', P, t.token, body);
    assert.equal(r.status, status, r.text);
    if (status === 422)
      assert.ok(
        Object.keys(r.body.errors ?? {}).some((k) => k === field || k.startsWith(`${field}.`)),
        `${field} named: ${r.text}`,
      );
    return r;
  };
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: inMs(-HOUR) }, 'scheduled_at');
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: inMs(5 * 60_000) }, 'scheduled_at');
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: inMs(31 * 24 * HOUR) }, 'scheduled_at');
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: 'next friday' }, 'scheduled_at');
  await refuse({ text: 'x'.repeat(2201), media: [IMAGE], platforms: ['instagram'] }, 'text');
  await refuse({ text: Array.from({ length: 31 }, (_, i) => `#t${i}`).join(' '), media: [IMAGE], platforms: ['instagram'] }, 'text');
  await refuse({ text: 'no picture', platforms: ['instagram'] }, 'media');
  await refuse({ text: 'x', media: [{ type: 'video', url: 'https://cdn.example.com/v.mp4' }], platforms: ['facebook'] }, 'media');
  await refuse({ text: 'x', media: [IMAGE, IMAGE], platforms: ['facebook'] }, 'media');
  await refuse({ text: 'x', media: [{ type: 'image', url: 'file:///etc/passwd' }], platforms: ['facebook'] }, 'media');
  await refuse({ text: 'x', platforms: ['myspace'] }, 'platforms');
  await refuse({ text: 'x', platforms: [] }, 'platforms');
  await refuse({ text: 'x', platforms: ['facebook'], colour: 'red' }, 'colour');
  await refuse({ text: 'a\u0000b', platforms: ['facebook'] }, 'text');
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: '275760-09-13T00:00:00Z' }, 'scheduled_at');
  await refuse({ text: 'x', platforms: ['facebook'], scheduled_at: '0001-01-01T00:00:00Z' }, 'scheduled_at');
  // Scheduling needs a connection to every platform: Instagram has none here.
  await refuse({ text: 'x', media: [IMAGE], platforms: ['instagram'], scheduled_at: inMs(HOUR) }, 'platforms');
  const raw = await fetch(`${process.env.API_URL}${P}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: '{"text": ',
  });
  assert.equal(raw.status, 400);
  assert.equal(await postCount(t), before, 'nothing written');

  // A draft to Instagram may be written without a connection; publishing it may not.
  const draft = await create(t, { text: 'x', media: [IMAGE], platforms: ['instagram'] });
  const pub = await api('POST', `${P}/${draft.uid}/publish`, t.token, {});
  assert.equal(pub.status, 422, pub.text);
  assert.match(pub.body.errors.platforms[0], /no Instagram connection/);
  assert.equal((await get(t, draft.uid)).status, 'draft', 'still a draft');
  const late = await api('POST', `${P}/${draft.uid}/schedule`, t.token, { scheduled_at: inMs(-60_000) });
  assert.equal(late.status, 422, late.text);
  const edit = await api('PATCH', `${P}/${draft.uid}`, t.token, { text: 'y'.repeat(2300) });
  assert.equal(edit.status, 422, edit.text);
  assert.equal((await get(t, draft.uid)).text, 'x', 'the refused edit wrote nothing');
  assert.equal((await api('PATCH', `${P}/${draft.uid}`, t.token, {})).status, 422, 'an edit names something');

  for (const uid of ['pst_AAAAAAAAAAAAAAAAAAAA', 'nope', 'pst_' + 'x'.repeat(500)]) {
    assert.equal((await api('GET', `${P}/${uid}`, t.token)).status, 404, uid);
    assert.equal((await api('POST', `${P}/${uid}/publish`, t.token, {})).status, 404, uid);
  }
  const list = await api('GET', `${P}?status=sideways`, t.token);
  assert.equal(list.status, 422, list.text);
});

test('tenant isolation and permissions: another account’s post is not found on any path; posts.view reads, posts.manage writes', async () => {
  const a = await newTenant();
  const b = await newTenant();
  await connect(a, 'facebook');
  await connect(b, 'facebook');
  const post = await create(a, { text: 'A only', platforms: ['facebook'], scheduled_at: inMs(HOUR) });
  const paths: [string, string, unknown?][] = [
    ['GET', `${P}/${post.uid}`],
    ['PATCH', `${P}/${post.uid}`, { text: 'B was here' }],
    ['POST', `${P}/${post.uid}/schedule`, { scheduled_at: inMs(2 * HOUR) }],
    ['POST', `${P}/${post.uid}/publish`, {}],
    ['POST', `${P}/${post.uid}/cancel`, {}],
    ['DELETE', `${P}/${post.uid}`],
  ];
  for (const [method, path, body] of paths) {
    const r = await api(method, path, b.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  const listB = await api('GET', P, b.token);
  assert.equal(listB.status, 200, listB.text);
  assert.ok(!listB.body.data.posts.some((p: any) => p.uid === post.uid));
  const still = await get(a, post.uid);
  assert.deepEqual([still.status, still.text], ['scheduled', 'A only'], 'untouched by B');
  const listA = await api('GET', `${P}?status=scheduled`, a.token);
  assert.deepEqual(
    listA.body.data.posts.map((p: any) => p.uid),
    [post.uid],
  );
  assert.equal(listA.body.data.pagination.total, 1);

  const viewer = await keyWith(a, ['posts.view']);
  assert.equal((await api('GET', `${P}/${post.uid}`, viewer)).status, 200);
  assert.equal((await api('POST', P, viewer, { text: 'x', platforms: ['facebook'] })).status, 403);
  assert.equal((await api('POST', `${P}/${post.uid}/cancel`, viewer, {})).status, 403);
  const none = await keyWith(a, ['contacts.view']);
  assert.equal((await api('GET', P, none)).status, 403);
  assert.equal((await api('GET', P, a.legacyToken)).status, 403, 'a key with no issuer is refused');
  await api('POST', `${P}/${post.uid}/cancel`, a.token, {});
});
