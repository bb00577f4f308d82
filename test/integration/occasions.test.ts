import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection, Client, MONTHS, ScheduleNotFoundError, ScheduleOverlapPolicy } from '@temporalio/client';
import { api, admin, http, sim, eventually, newTenant, uniquePhone, type Tenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';

// Occasion greetings end to end (issue 28, point 3; docs/occasions.md): cards storing only
// overrides with what they inherit, bad input refused whole, a greeting sent now as a campaign whose
// messages reach the simulator, the Temporal Schedule of a card switched on (its spec; triggered
// twice, one campaign), switched off, and tenants that never see each other on REST or MCP.

const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
const temporal = new Client({ connection });

const O = '/api/v3/occasions';
const get = (t: Tenant, key = '') => api('GET', `${O}${key ? `/${key}` : ''}`, t.token);
const patch = (t: Tenant, key: string, body: unknown) => api('PATCH', `${O}/${key}`, t.token, body);
const put = (t: Tenant, key: string, body: unknown) => api('PUT', `${O}/${key}`, t.token, body);
const send = (t: Tenant, key: string) => api('POST', `${O}/${key}/send`, t.token, {});
const defaults = (t: Tenant, body: unknown) => api('PATCH', `${O}/defaults`, t.token, body);
const scheduleOf = (t: Tenant, key: string) => temporal.schedule.getHandle(`occasion/${t.accountId}/${key}`);
const scheduleExists = async (t: Tenant, key: string) => {
  try {
    await scheduleOf(t, key).describe();
    return true;
  } catch (err) {
    if (err instanceof ScheduleNotFoundError) return false;
    throw err;
  }
};

/**
 * A zone where it is now between 03:00 and 20:59, so "today" cannot change while a test runs, and
 * today's date there (YYYY-MM-DD).
 */
function safeZone(): { zone: string; today: string; tomorrow: string } {
  for (const zone of ['UTC', 'Asia/Tokyo', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland', 'America/Los_Angeles']) {
    const f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    });
    const parts = Object.fromEntries(f.formatToParts(new Date()).map((p) => [p.type, p.value]));
    if (Number(parts.hour) >= 3 && Number(parts.hour) <= 20) {
      const today = `${parts.year}-${parts.month}-${parts.day}`;
      const t = new Date(`${today}T12:00:00Z`);
      t.setUTCDate(t.getUTCDate() + 1);
      return { zone, today, tomorrow: t.toISOString().slice(0, 10) };
    }
  }
  throw new Error('no zone between 03:00 and 21:00');
}

const newGroup = async (t: Tenant, name: string) => {
  const r = await http('POST', '/api/v3/contact-groups', { token: t.token, body: { name } });
  assert.equal(r.status, 201, r.text);
  return r.body.data as { id: number; uid: string };
};
const contact = async (t: Tenant, group: number, body: Record<string, unknown>) => {
  const r = await api('POST', `/api/v3/contacts/${group}/store`, t.legacyToken, body);
  assert.equal(r.status, 201, r.text);
};
const received = async (to: string) =>
  (await sim('GET', `/_sim/sms/messages?to=${encodeURIComponent(to)}`)).body as { count: number; messages: any[] };
const campaignDone = (t: Tenant, uid: string) =>
  eventually(
    () => api('GET', `/api/v3/campaign/${uid}/view`, t.legacyToken),
    (r) => r.body.data?.status === 'completed' && r.body.data.in_flight_count === 0,
    30_000,
    400,
    `campaign ${uid} completed and delivered`,
  );

test('cards: the catalogue of the workspace’s country, overrides only, inherited, PUT replaces, PATCH merges, reset, custom occasions', async () => {
  const t = await newTenant();
  const bare = await get(t);
  assert.equal(bare.status, 200, bare.text);
  assert.deepEqual(
    bare.body.data.occasions.map((c: any) => c.key),
    ['birthday'],
    'no country: the birthday only',
  );
  assert.equal(bare.body.data.time_zone, 'UTC');

  const d = await defaults(t, { country: 'TZ' });
  assert.equal(d.status, 200, d.text);
  assert.deepEqual([d.body.data.country, d.body.data.time_zone, d.body.data.send_time], ['TZ', 'Africa/Dar_es_Salaam', '09:00']);
  assert.deepEqual(d.body.data.inherited, ['time_zone', 'send_time']);
  const list = (await get(t)).body.data;
  assert.equal(list.occasions.length, 14);
  assert.equal(list.time_zone, 'Africa/Dar_es_Salaam');
  for (const c of list.occasions) {
    assert.deepEqual(c.overrides, {}, c.key);
    assert.deepEqual(c.inherited, ['name', 'enabled', 'message', 'send_time', 'sender_id', 'date', 'date_field', 'contact_group_ids']);
    assert.equal(c.enabled, false);
    assert.equal(c.schedule_id, null);
  }
  const union = (await get(t, 'union-day')).body.data;
  assert.deepEqual(
    [union.id, union.kind, union.custom, union.name, union.date, union.rule],
    ['union-day', 'holiday', false, 'Union Day', '04-26', null],
  );
  assert.match(union.next_date, /^[0-9]{4}-04-26$/);
  const friday = (await get(t, 'good-friday')).body.data;
  assert.deepEqual([friday.date, friday.rule], [null, '2 days before Easter Sunday']);

  const p = await patch(t, 'union-day', { message: 'Heri ya Muungano, {{name}}!' });
  assert.equal(p.status, 200, p.text);
  assert.deepEqual(p.body.data.overrides, { message: 'Heri ya Muungano, {{name}}!' });
  assert.ok(!p.body.data.inherited.includes('message'));
  assert.equal(p.body.data.inherited_from.send_time, 'catalogue');
  const p2 = await patch(t, 'union-day', { send_time: '07:15' });
  assert.deepEqual(p2.body.data.overrides, { message: 'Heri ya Muungano, {{name}}!', send_time: '07:15' }, 'PATCH merges');
  const r = await put(t, 'union-day', { send_time: '10:00' });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body.data.overrides, { send_time: '10:00' }, 'PUT replaces the whole set');
  assert.match(r.body.data.message, /Happy Union Day/);
  const cleared = await patch(t, 'union-day', { send_time: null });
  assert.deepEqual(cleared.body.data.overrides, {}, 'null inherits again');

  // A workspace message names each occasion with {{occasion}}; the card's own wins over it.
  await defaults(t, { message: 'Heri ya {{occasion}} kutoka Duka, {{name}}!', send_time: '08:00' });
  const ws = (await get(t, 'nyerere-day')).body.data;
  assert.equal(ws.message, 'Heri ya Nyerere Day kutoka Duka, {{name}}!');
  assert.deepEqual([ws.inherited_from.message, ws.inherited_from.send_time, ws.send_time], ['workspace', 'workspace', '08:00']);
  await defaults(t, { message: null, send_time: null });

  const reset = await api('DELETE', `${O}/union-day`, t.token);
  assert.equal(reset.status, 200, reset.text);
  assert.deepEqual(reset.body.data, { key: 'union-day', reset: true, custom: false });

  const custom = await put(t, 'founders-day', { kind: 'holiday', name: 'Founders’ Day', date: '06-15', message: 'Happy Founders’ Day!' });
  assert.equal(custom.status, 200, custom.text);
  assert.deepEqual([custom.body.data.custom, custom.body.data.kind, custom.body.data.date], [true, 'holiday', '06-15']);
  assert.deepEqual(custom.body.data.inherited, ['enabled', 'send_time', 'sender_id', 'date_field', 'contact_group_ids']);
  assert.ok((await get(t)).body.data.occasions.some((c: any) => c.key === 'founders-day'));
  const anniversary = await put(t, 'member-anniversary', {
    kind: 'contact_date',
    name: 'Member anniversary',
    date_field: 'joined',
    message: 'x',
  });
  assert.equal(anniversary.status, 200, anniversary.text);
  assert.equal(anniversary.body.data.date_field, 'joined');
  const gone = await api('DELETE', `${O}/founders-day`, t.token);
  assert.deepEqual(gone.body.data, { key: 'founders-day', reset: true, custom: true });
  assert.equal((await get(t, 'founders-day')).status, 404);
  assert.equal((await api('DELETE', `${O}/founders-day`, t.token)).status, 404);
  assert.equal((await patch(t, 'no-such-occasion', { enabled: true })).status, 404);
  assert.equal((await get(t, 'no-such-occasion')).status, 404);
});

test('bad input: a date that does not exist, malformed fields, foreign groups and senders are 422 naming the field; nothing is written', async () => {
  const t = await newTenant();
  const other = await newTenant();
  const foreign = await newGroup(other, 'Theirs');
  await defaults(t, { country: 'KE' });
  const cases: Array<[string, unknown, string]> = [
    ['jamhuri-day', { date: '02-30', enabled: true }, 'date'],
    ['jamhuri-day', { date: '2027-02-29', enabled: true }, 'date'],
    ['jamhuri-day', { date: '04-31' }, 'date'],
    ['jamhuri-day', { date: '12/12' }, 'date'],
    ['birthday', { date: '03-01' }, 'date'],
    ['jamhuri-day', { date_field: 'dob' }, 'date_field'],
    ['jamhuri-day', { send_time: '25:00', enabled: true }, 'send_time'],
    ['jamhuri-day', { send_time: '9am' }, 'send_time'],
    ['jamhuri-day', { message: '   ', enabled: true }, 'message'],
    ['jamhuri-day', { message: 'm'.repeat(4097) }, 'message'],
    ['jamhuri-day', { name: 'n'.repeat(161) }, 'name'],
    ['jamhuri-day', { contact_group_ids: [foreign.id], enabled: true }, 'contact_group_ids'],
    ['jamhuri-day', { contact_group_ids: [] }, 'contact_group_ids'],
    ['jamhuri-day', { contact_group_ids: ['x'] }, 'contact_group_ids'],
    ['jamhuri-day', { sender_id: 'UNKNOWNID', enabled: true }, 'sender_id'],
    ['jamhuri-day', { enabled: 'yes' }, 'enabled'],
    ['jamhuri-day', { kind: 'contact_date' }, 'kind'],
    ['jamhuri-day', { colour: 'red' }, 'colour'],
  ];
  for (const [key, body, field] of cases) {
    const res = await patch(t, key, body);
    assert.equal(res.status, 422, `${key} ${JSON.stringify(body).slice(0, 60)} → ${res.text.slice(0, 200)}`);
    assert.equal(res.body.status, 'error');
    assert.ok(Object.keys(res.body.errors ?? {}).length > 0, res.text);
    if (field !== 'colour')
      assert.ok(
        Object.keys(res.body.errors ?? {}).some((k) => k === field || k.startsWith(`${field}.`)),
        `${field}: ${res.text.slice(0, 200)}`,
      );
  }
  for (const [key, body, field] of [
    ['my-day', { name: 'Mine', date: '05-05' }, 'kind'],
    ['my-day', { kind: 'holiday', name: 'Mine' }, 'date'],
    ['my-day', { kind: 'contact_date', name: 'Mine' }, 'date_field'],
    ['my-day', { kind: 'holiday', date: '05-05' }, 'name'],
    ['my-day', { kind: 'holiday', name: 'Mine', date: '2026-02-29' }, 'date'],
    ['My_Day', { kind: 'holiday', name: 'Mine', date: '05-05' }, 'key'],
    ['defaults', { kind: 'holiday', name: 'Mine', date: '05-05' }, 'key'],
  ] as const) {
    const res = await put(t, key, body);
    assert.equal(res.status, key === 'defaults' ? 405 : 422, `${key} ${JSON.stringify(body)} → ${res.text.slice(0, 200)}`);
    if (key !== 'defaults') assert.ok(res.body.errors?.[field], `${field}: ${res.text.slice(0, 200)}`);
  }
  for (const [body, field] of [
    [{ time_zone: 'Mars/Olympus_Mons' }, 'time_zone'],
    [{ country: 'ZZ' }, 'country'],
    [{ send_time: '24:00' }, 'send_time'],
    [{ sender_id: 'UNKNOWNID' }, 'sender_id'],
  ] as const) {
    const res = await defaults(t, body);
    assert.equal(res.status, 422, `${JSON.stringify(body)} → ${res.text.slice(0, 200)}`);
    assert.ok(res.body.errors?.[field], res.text);
  }
  // A key that cannot name an occasion is no occasion, never a database error.
  for (const key of [encodeURIComponent('a\u0000b'), 'k'.repeat(300), encodeURIComponent('ü'), 'UNION-DAY']) {
    for (const [method, path, body] of [
      ['GET', `${O}/${key}`, undefined],
      ['PATCH', `${O}/${key}`, { enabled: true }],
      ['DELETE', `${O}/${key}`, undefined],
      ['POST', `${O}/${key}/send`, {}],
    ] as const) {
      const res = await api(method, path, t.token, body);
      // A NUL is refused by the door itself (400), before any operation.
      assert.equal(res.status, key.includes('%00') ? 400 : 404, `${method} ${path.slice(0, 60)}: ${res.text.slice(0, 200)}`);
    }
    const res = await put(t, key, { kind: 'holiday', name: 'X', date: '05-05' });
    assert.equal(res.status, key.includes('%00') ? 400 : 422, res.text.slice(0, 200));
    if (res.status === 422) assert.ok(res.body.errors?.key, res.text.slice(0, 200));
  }
  const card = (await get(t, 'jamhuri-day')).body.data;
  assert.deepEqual(card.overrides, {}, 'nothing half-written');
  assert.equal(card.enabled, false);
  assert.equal(await scheduleExists(t, 'jamhuri-day'), false, 'no schedule made by a refused write');
  assert.equal((await get(t, 'my-day')).status, 404);
  assert.equal((await api('GET', `${O}/defaults`, t.token)).body.data.country, 'KE');
});

test('send now: today’s birthdays get one campaign whose messages reach the simulator (opted-in, once per number, blacklist kept); again is 409', async () => {
  const t = await newTenant();
  const { zone, today, tomorrow } = safeZone();
  await defaults(t, { time_zone: zone });
  const [a, b] = [await newGroup(t, 'Customers'), await newGroup(t, 'VIP')];
  const [ann, bob, cara, dan, eve] = [uniquePhone(), uniquePhone(), uniquePhone(), uniquePhone(), uniquePhone()];
  const born = `1990-${today.slice(5)}`;
  await contact(t, a.id, { PHONE: ann, name: 'Ann', birthday: born });
  await contact(t, a.id, { PHONE: bob, name: 'Bob', birthday: `--${today.slice(5)}` });
  await contact(t, b.id, { PHONE: bob, name: 'Bob VIP', birthday: today.slice(5) });
  await contact(t, a.id, { PHONE: cara, name: 'Cara', birthday: `1985-${tomorrow.slice(5)}` });
  await contact(t, a.id, { PHONE: dan, name: 'Dan', birthday: born, is_subscribed: false });
  await contact(t, a.id, { PHONE: eve, name: 'Eve', birthday: born });
  assert.equal((await admin('POST', `/accounts/${t.accountId}/blacklist`, { phone: eve })).status, 201);
  await patch(t, 'birthday', { message: 'Happy birthday {{name}}!' });

  const s = await send(t, 'birthday');
  assert.equal(s.status, 201, s.text);
  const c = s.body.data;
  assert.match(c.uid, /^cmp_/);
  assert.equal(c.contact_group, null);
  assert.deepEqual(c.audience, { kind: 'contact_date', field: 'birthday', month_days: [today.slice(5)], contact_group_ids: null });
  assert.equal(c.name, `Birthday greetings ${today}`);
  const done = await campaignDone(t, c.uid);
  assert.equal(done.body.data.total_recipients, 2, 'Ann and Bob; Cara is tomorrow, Dan opted out, Eve is blacklisted');
  assert.equal(done.body.data.delivered_count, 2);
  assert.deepEqual(
    (await received(ann)).messages.map((m) => m.text ?? m.body ?? m.message),
    ['Happy birthday Ann!'],
  );
  assert.equal((await received(bob)).count, 1, 'a number in two groups is greeted once');
  for (const to of [cara, dan, eve]) assert.equal((await received(to)).count, 0, to);
  const balance = (await api('GET', '/api/v3/balance', t.token)).body.data.balance;
  assert.ok(Math.abs(balance - (100 - 2 * 0.01)) < 1e-9, `one segment per recipient debited: ${balance}`);

  const again = await send(t, 'birthday');
  assert.equal(again.status, 409, again.text);
  assert.equal(again.body.reason, 'already_sent');
  assert.equal((await received(ann)).count, 1);
  const card = (await get(t, 'birthday')).body.data;
  assert.equal(card.last_campaign.uid, c.uid);
  assert.equal(card.last_campaign.business_key, `occasion:birthday:${today}`);

  // A holiday greets every contact that opted in (of its groups): one of the account's own, today.
  const own = await put(t, 'shop-day', {
    kind: 'holiday',
    name: 'Shop day',
    date: today.slice(5),
    message: 'Karibu {{name}}',
    contact_group_ids: [b.id],
  });
  assert.equal(own.status, 200, own.text);
  assert.equal(own.body.data.next_date, today);
  const h = await send(t, 'shop-day');
  assert.equal(h.status, 201, h.text);
  assert.deepEqual(h.body.data.audience, { kind: 'subscribed', contact_group_ids: [b.id] });
  await campaignDone(t, h.body.data.uid);
  assert.equal((await received(bob)).count, 2, 'Bob VIP greeted for the shop day');
  assert.equal((await received(ann)).count, 1, 'Ann is not in that group');
});

test('switched on: a Temporal Schedule with the card’s spec; triggered twice it makes one campaign; switched off it is gone', async () => {
  const t = await newTenant();
  const { zone, today } = safeZone();
  await defaults(t, { time_zone: zone, country: 'US' });
  const g = await newGroup(t, 'All');
  const phone = uniquePhone();
  await contact(t, g.id, { PHONE: phone, name: 'Gail', birthday: `2000-${today.slice(5)}` });

  const on = await patch(t, 'birthday', { enabled: true, send_time: '08:30' });
  assert.equal(on.status, 200, on.text);
  assert.equal(on.body.data.schedule_id, `occasion/${t.accountId}/birthday`);
  const desc = await scheduleOf(t, 'birthday').describe();
  assert.equal(desc.spec.timezone, zone);
  assert.equal(desc.spec.calendars?.length, 1);
  const cal = desc.spec.calendars![0];
  assert.deepEqual([cal.hour, cal.minute], [[{ start: 8, end: 8, step: 1 }], [{ start: 30, end: 30, step: 1 }]]);
  assert.equal(desc.action.type, 'startWorkflow');
  assert.equal(desc.action.workflowType, 'occasionWorkflow');
  assert.equal(desc.action.workflowId, `occasion/${t.accountId}/birthday`);
  assert.deepEqual(desc.action.args, [{ accountId: t.accountId, key: 'birthday' }]);
  assert.equal(desc.state.paused, false);

  const thanks = await patch(t, 'thanksgiving-day', { enabled: true });
  const hd = await scheduleOf(t, 'thanksgiving-day').describe();
  assert.equal(hd.spec.calendars?.length, 5, 'five years of the moving holiday');
  const first = hd.spec.calendars![0];
  const [y, m, dd] = (thanks.body.data.next_date as string).split('-').map(Number);
  assert.deepEqual(
    [first.year?.[0].start, first.month?.[0].start, first.dayOfMonth?.[0].start, first.hour?.[0].start],
    [y, MONTHS[m - 1], dd, 9],
  );

  // Triggered twice: two runs of the day (Temporal names a run by the second it starts, so the
  // second trigger comes a second later), one campaign, one message.
  const runsOf = async () => {
    const out: any[] = [];
    for await (const w of temporal.workflow.list({ query: `WorkflowType = 'occasionWorkflow' AND AccountId = '${t.accountId}'` }))
      out.push(w);
    return out;
  };
  await scheduleOf(t, 'birthday').trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  await eventually(runsOf, (ws) => ws.length === 1, 30_000, 300, 'the first run listed');
  await new Promise((r) => setTimeout(r, 1100));
  await scheduleOf(t, 'birthday').trigger(ScheduleOverlapPolicy.ALLOW_ALL);
  const runs = await eventually(
    runsOf,
    (ws) => ws.length === 2 && ws.every((w) => w.status.name === 'COMPLETED'),
    30_000,
    300,
    'two runs of the schedule completed',
  );
  const results = await Promise.all(runs.map((w) => temporal.workflow.getHandle(w.workflowId, w.runId).result()));
  assert.deepEqual(results.map((r: any) => r.status).sort(), ['already_sent', 'sent'], JSON.stringify(results));
  assert.equal(results[0].campaign_uid, results[1].campaign_uid);
  assert.equal(results[0].day, today);
  for (const w of runs) assert.match(w.workflowId, new RegExp(`^occasion/${t.accountId}/birthday-`));
  await campaignDone(t, results[0].campaign_uid);
  assert.equal((await received(phone)).count, 1, 'one greeting however often the day runs');
  assert.equal((await get(t, 'birthday')).body.data.last_campaign.uid, results[0].campaign_uid);
  assert.equal((await send(t, 'birthday')).status, 409, 'send now after the scheduled run: sent already');

  // Moving the workspace's clock moves the schedule; switching off removes it.
  await defaults(t, { time_zone: 'Africa/Nairobi' });
  assert.equal((await scheduleOf(t, 'birthday').describe()).spec.timezone, 'Africa/Nairobi');
  const off = await patch(t, 'birthday', { enabled: false });
  assert.equal(off.body.data.schedule_id, null);
  assert.equal(await scheduleExists(t, 'birthday'), false);
  await api('DELETE', `${O}/thanksgiving-day`, t.token);
  assert.equal(await scheduleExists(t, 'thanksgiving-day'), false, 'reset switches it off');
  // A country without that holiday: its schedule goes with it.
  await patch(t, 'independence-day', { enabled: true });
  assert.equal(await scheduleExists(t, 'independence-day'), true);
  await defaults(t, { country: 'GB' });
  assert.equal(await scheduleExists(t, 'independence-day'), false);
});

test('permissions and tenants: view/manage on a live issuer, legacy keys refused, nothing of another account on REST or MCP', async () => {
  const a = await newTenant();
  const b = await newTenant();
  await defaults(a, { country: 'TZ' });
  await put(a, 'ours', { kind: 'holiday', name: 'Ours', date: '09-09', message: 'Ours' });
  await patch(a, 'saba-saba', { message: 'A’s text', enabled: true });

  for (const [method, path] of [
    ['GET', `${O}/ours`],
    ['PATCH', `${O}/ours`],
    ['DELETE', `${O}/ours`],
    ['POST', `${O}/ours/send`],
  ] as const) {
    const r = await api(
      method,
      path,
      b.token,
      method === 'GET' || method === 'DELETE' ? undefined : method === 'POST' ? {} : { enabled: true },
    );
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  assert.deepEqual(
    (await get(b)).body.data.occasions.map((c: any) => c.key),
    ['birthday'],
    'B sees neither A’s country nor A’s own occasion',
  );
  await defaults(b, { country: 'TZ' });
  const theirs = (await get(b, 'saba-saba')).body.data;
  assert.deepEqual([theirs.enabled, theirs.overrides], [false, {}], 'A’s overrides are A’s');
  assert.equal(await scheduleExists(b, 'saba-saba'), false);
  assert.equal(await scheduleExists(a, 'saba-saba'), true);
  assert.equal((await api('PATCH', `${O}/saba-saba`, b.token, { enabled: false })).status, 200);
  assert.equal(await scheduleExists(a, 'saba-saba'), true, 'B switching its own off leaves A’s');

  assert.equal((await get(a)).status, 200);
  assert.equal((await api('GET', O, a.legacyToken)).status, 403, 'a key without an issuer');
  const viewer = await newTenant({ permissions: ['communications.campaigns.view'] });
  assert.equal((await get(viewer)).status, 200);
  assert.equal((await get(viewer, 'birthday')).status, 200);
  for (const r of [
    await patch(viewer, 'birthday', { enabled: true }),
    await send(viewer, 'birthday'),
    await defaults(viewer, { country: 'KE' }),
  ])
    assert.equal(r.status, 403, r.text);
  const none = await newTenant({ permissions: ['contacts.view'] });
  assert.equal((await get(none)).status, 403);

  const cred = await admin('POST', `/accounts/${b.accountId}/mcp-credentials`, { name: 'assistant', user_id: b.userId });
  assert.equal(cred.status, 201, cred.text);
  await withMcpServer('messaging', cred.body.data.token, async (c) => {
    const names = (await c.listTools()).tools.map((x) => x.name);
    for (const n of [
      'list_occasions',
      'get_occasion',
      'set_occasion',
      'update_occasion',
      'reset_occasion',
      'send_occasion',
      'get_occasion_defaults',
      'update_occasion_defaults',
    ])
      assert.ok(names.includes(n), n);
    const listed = (await c.callTool({ name: 'list_occasions', arguments: {} })) as {
      structuredContent?: { occasions: { key: string }[] };
    };
    assert.ok(!listed.structuredContent?.occasions.some((o) => o.key === 'ours'));
    for (const [name, args] of [
      ['get_occasion', { key: 'ours' }],
      ['update_occasion', { key: 'ours', enabled: true }],
      ['reset_occasion', { key: 'ours' }],
      ['send_occasion', { key: 'ours' }],
    ] as const) {
      const r = (await c.callTool({ name, arguments: args })) as { isError?: boolean; content: { type: string; text?: string }[] };
      assert.equal(r.isError, true, `${name}: ${JSON.stringify(r)}`);
      assert.match(r.content.find((x) => x.type === 'text')?.text ?? '', /not found/i);
    }
    const bad = (await c.callTool({ name: 'update_occasion', arguments: { key: 'union-day', date: '02-30' } })) as {
      isError?: boolean;
      content: any[];
    };
    assert.equal(bad.isError, true);
    const own = (await c.callTool({ name: 'update_occasion', arguments: { key: 'union-day', message: 'B’s' } })) as {
      structuredContent?: any;
    };
    assert.deepEqual(own.structuredContent?.overrides, { message: 'B’s' });
  });
  assert.deepEqual((await get(a, 'union-day')).body.data.overrides, {}, 'B’s tool changed B’s card only');
  assert.equal((await get(a, 'ours')).status, 200, 'A’s own occasion is still there');

  // The operator reads an account's cards.
  const op = await admin('GET', `/accounts/${a.accountId}/occasions?enabled=true`);
  assert.equal(op.status, 200, op.text);
  assert.deepEqual(
    op.body.data.occasions.map((c: any) => c.key),
    ['saba-saba'],
  );
  await patch(a, 'saba-saba', { enabled: false });
});
