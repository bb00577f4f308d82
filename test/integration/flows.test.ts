import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, eventually, newTenant, sim, uniquePhone, type Tenant } from '../support/stack.js';

// Flows (docs/flows.md): the operator's strict load (each malformed definition a 422 naming the
// problem, nothing written; a bundle changed after export refused), reads, publication with its
// revision check, export and import elsewhere; a session walking the graph for a customer whose
// replies come through the signed chat ingress (messages, a wait, a split, a lead stage, a named
// operation, a handover), one live session per customer in an account, ending one, the
// flow.session.* events with why they ended, and tenant isolation on every path: the same
// customer's reply to one account never reaches another account's session.

const F = '/api/v3/flows';

async function waTenant(): Promise<Tenant & { phoneNumberId: string }> {
  const t = await newTenant();
  const phoneNumberId = `31${t.accountId}${Date.now() % 100000}`;
  const number = `+2556${String(t.accountId).padStart(4, '0')}${String(Date.now() % 10000).padStart(4, '0')}`;
  const r = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number,
    capabilities: ['whatsapp'],
    provider_phone_number_id: phoneNumberId,
    business_account_id: `WABA${t.accountId}`,
  });
  assert.equal(r.status, 201, r.text);
  return { ...t, phoneNumberId };
}

let seq = Date.now() % 10_000;
/** A Tanzanian mobile number of its numbering plan's length (the leads family reads it as a person), unique in the run. */
const tzCustomer = () => `+2557${String(process.pid % 10_000).padStart(4, '0')}${String((++seq % 9_999) + 1).padStart(4, '0')}`;

const load = (t: Tenant, body: unknown) => admin('POST', `/accounts/${t.accountId}/flows`, body);

/** A customer writes to the business's number (signed by the simulator, as WhatsApp would). */
async function say(t: { phoneNumberId: string }, customer: string, text: string) {
  const r = await sim('POST', '/_sim/whatsapp/inbound', { from: customer.replace('+', ''), phone_number_id: t.phoneNumberId, text });
  assert.equal(r.body.delivered, true, JSON.stringify(r.body));
}

const texts = async (customer: string, phoneNumberId: string) =>
  ((await sim('GET', `/_sim/whatsapp/messages?to=${customer.replace('+', '')}`)).body.messages as any[])
    .filter((m) => m.phoneNumberId === phoneNumberId)
    .map((m) => m.request?.body?.text?.body ?? m.type);

async function flowEvents(t: Tenant) {
  const r = await admin('GET', `/accounts/${t.accountId}/events?limit=100`);
  assert.equal(r.status, 200, r.text);
  return (r.body.data as any[]).filter((e) => e.event.startsWith('flow.')).reverse();
}

const QUALIFY = {
  description: 'Qualify a lead in chat',
  initial_state: 'welcome',
  states: [
    {
      name: 'welcome',
      type: 'send_message',
      properties: { body: 'Hi {{flow.data.name}}!' },
      transitions: [{ event: 'sent', next: 'ask' }],
    },
    {
      name: 'ask',
      type: 'wait_for_reply',
      properties: { body: 'Interested in a demo? Reply YES or NO', timeout_seconds: 3600 },
      transitions: [
        { event: 'reply', next: 'route' },
        { event: 'timeout', next: 'bye' },
      ],
    },
    {
      name: 'route',
      type: 'split',
      properties: {
        cases: [
          { event: 'yes', match: 'any_of', value: ['yes', 'y', 'sure'] },
          { event: 'no', match: 'equals', value: 'no' },
        ],
      },
      transitions: [
        { event: 'yes', next: 'qualify' },
        { event: 'no', next: 'bye' },
        { event: 'no_match', next: 'ask' },
      ],
    },
    { name: 'qualify', type: 'set_lead_stage', properties: { stage: 'qualified' }, transitions: [{ event: 'done', next: 'record' }] },
    {
      name: 'record',
      type: 'run_operation',
      properties: { operation: 'demo-wanted', input: { data: { phone: '{{contact.phone}}', said: '{{widgets.ask.body}}' } } },
      transitions: [
        { event: 'succeeded', next: 'person' },
        { event: 'failed', next: 'person' },
      ],
    },
    { name: 'person', type: 'handover', properties: { note: 'Book a demo for {{flow.data.name}}' } },
    { name: 'bye', type: 'send_message', properties: { body: 'Thanks, bye.' } },
  ],
};

test(
  'the operator load is strict: each malformed definition is a 422 naming its problem, and nothing is written',
  { timeout: 60_000 },
  async () => {
    const t = await newTenant();
    const ok = (states: unknown[], initial = 'a') => ({ name: 'Strict', definition: { initial_state: initial, states } });
    const cases: [string, unknown, RegExp][] = [
      ['not an object', { name: 'Strict', definition: [] }, /^definition$/],
      ['no states', ok([]), /definition\.states/],
      ['unknown type', ok([{ name: 'a', type: 'teleport' }]), /states\.0\.type/],
      ['unknown property', ok([{ name: 'a', type: 'send_message', properties: { body: 'x', colour: 'red' } }]), /properties\.colour/],
      ['unknown event', ok([{ name: 'a', type: 'end', transitions: [{ event: 'sent', next: 'a' }] }]), /transitions\.0\.event/],
      [
        'dangling transition',
        ok([{ name: 'a', type: 'send_message', properties: { body: 'x' }, transitions: [{ event: 'sent', next: 'ghost' }] }]),
        /transitions\.0\.next/,
      ],
      ['missing initial state', ok([{ name: 'a', type: 'end' }], 'zzz'), /initial_state/],
      [
        'unreachable state',
        ok([
          { name: 'a', type: 'end' },
          { name: 'island', type: 'end' },
        ]),
        /states\.1\.name/,
      ],
      [
        'a loop that never waits',
        ok([
          { name: 'a', type: 'send_message', properties: { body: 'x' }, transitions: [{ event: 'sent', next: 'b' }] },
          { name: 'b', type: 'send_message', properties: { body: 'y' }, transitions: [{ event: 'sent', next: 'a' }] },
        ]),
        /^definition\.states$/,
      ],
      [
        'duplicate names',
        ok([
          { name: 'a', type: 'end' },
          { name: 'a', type: 'end' },
        ]),
        /states\.1\.name/,
      ],
      ['a bad timeout', ok([{ name: 'a', type: 'wait_for_reply', properties: { timeout_seconds: 0 } }]), /timeout_seconds/],
      ['an unknown lead stage', ok([{ name: 'a', type: 'set_lead_stage', properties: { stage: 'hot' } }]), /stage/],
      [
        'too many states',
        ok(
          Array.from({ length: 201 }, (_, i) => ({ name: `s${i}`, type: 'end' })),
          's0',
        ),
        /definition\.states/,
      ],
      ['no name', { definition: QUALIFY }, /^name$/],
    ];
    for (const [what, body, field] of cases) {
      const r = await load(t, body);
      assert.equal(r.status, 422, `${what}: ${r.text}`);
      assert.equal(r.body.status, 'error', what);
      assert.ok(
        Object.keys(r.body.errors ?? {}).some((k) => field.test(k)),
        `${what}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    // Beyond the body limit: 413 before anything is read.
    const huge = await load(t, {
      name: 'Huge',
      definition: { initial_state: 'a', states: [{ name: 'a', type: 'end', properties: { note: 'x'.repeat(700_000) } }] },
    });
    assert.equal(huge.status, 413, huge.text);
    assert.equal((await api('GET', F, t.token)).body.data.pagination.total, 0, 'nothing was written');
  },
);

test('reads, publish with its revision check, export and import elsewhere; isolation on every path', { timeout: 60_000 }, async () => {
  const [a, b] = [await newTenant(), await newTenant()];
  const first = await load(a, { name: 'Qualify', definition: QUALIFY, commit_message: 'first cut' });
  assert.equal(first.status, 201, first.text);
  const id = first.body.data.id;
  assert.deepEqual(
    [first.body.data.status, first.body.data.revision, first.body.data.published_revision, first.body.data.commit_message],
    ['draft', 1, null, 'first cut'],
  );
  // Starting a session of a flow never published is 409; so is exporting its published side.
  const early = await api('POST', `${F}/${id}/sessions`, a.token, { to: uniquePhone('2557') });
  assert.deepEqual([early.status, early.body.reason], [409, 'flow_not_published'], early.text);
  assert.equal((await api('GET', `${F}/${id}/export?revision=published`, a.token)).status, 409);

  const pub = await api('POST', `${F}/${id}/publish`, a.token, { revision: 1 });
  assert.equal(pub.status, 200, pub.text);
  assert.deepEqual([pub.body.data.status, pub.body.data.published_revision], ['published', 1]);
  // A second load is the next draft; the published revision stays until published again.
  const second = await load(a, { name: 'Qualify', definition: { ...QUALIFY, description: 'v2' } });
  assert.deepEqual(
    [second.status, second.body.data.revision, second.body.data.status, second.body.data.published_revision],
    [201, 2, 'draft', 1],
  );
  const stale = await api('POST', `${F}/${id}/publish`, a.token, { revision: 1 });
  assert.deepEqual([stale.status, stale.body.reason], [409, 'revision_moved'], stale.text);

  const list = await api('GET', `${F}?status=draft`, a.token);
  assert.equal(list.status, 200, list.text);
  assert.deepEqual(
    list.body.data.flows.map((f: any) => [f.id, f.name, f.revision, 'definition' in f]),
    [[id, 'Qualify', 2, false]],
  );
  const one = await api('GET', `${F}/${id}`, a.token);
  assert.equal(one.body.data.definition.description, 'v2');
  assert.equal(one.body.data.published_definition.description, 'Qualify a lead in chat');

  const exported = await api('GET', `${F}/${id}/export`, a.token);
  assert.equal(exported.status, 200, exported.text);
  const bundle = exported.body.data;
  assert.deepEqual(
    [bundle.format, bundle.version, bundle.name, bundle.revision, bundle.status],
    ['svc.flow-bundle', 1, 'Qualify', 1, 'published'],
  );
  assert.match(bundle.checksum, /^sha256:[0-9a-f]{64}$/);
  // Loaded into another account by its operator: the same definition, revision 1 there.
  const imported = await load(b, { bundle });
  assert.equal(imported.status, 201, imported.text);
  const there = await api('GET', `${F}/${imported.body.data.id}`, b.token);
  assert.deepEqual(there.body.data.definition, one.body.data.published_definition);
  // A bundle changed after export, or of another format, is refused; so is one beyond the limit.
  const tampered = await load(b, { bundle: { ...bundle, definition: { ...bundle.definition, initial_state: 'bye' } } });
  assert.equal(tampered.status, 422, tampered.text);
  assert.ok(tampered.body.errors['bundle.checksum']);
  assert.equal((await load(b, { bundle: { ...bundle, format: 'studio' } })).status, 422);
  const big = await load(b, { bundle: { ...bundle, padding: 'x'.repeat(540_000) } });
  assert.ok([413, 422].includes(big.status), big.text);
  assert.equal((await api('GET', F, b.token)).body.data.pagination.total, 1, 'only the good import was written');

  // Another account's flow is not found on every path; a malformed id too.
  for (const [method, path, body] of [
    ['GET', `${F}/${id}`],
    ['POST', `${F}/${id}/publish`, {}],
    ['GET', `${F}/${id}/export`],
    ['GET', `${F}/${id}/sessions`],
    ['POST', `${F}/${id}/sessions`, { to: uniquePhone('2557') }],
    ['GET', `${F}/${id}/sessions/FN${'0'.repeat(32)}`],
    ['GET', `${F}/${id}/sessions/FN${'0'.repeat(32)}/steps`],
    ['POST', `${F}/${id}/sessions/FN${'0'.repeat(32)}/end`, {}],
    ['GET', `${F}/abc`],
  ] as [string, string, unknown?][]) {
    const r = await api(method, path, b.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  assert.equal((await api('GET', `${F}/${id}/sessions/nope`, a.token)).status, 404);
  assert.equal((await api('GET', `${F}/${id}/sessions/FN${'0'.repeat(32)}`, a.token)).status, 404);
  // Bad input: 422, never 500.
  assert.equal((await api('POST', `${F}/${id}/sessions`, a.token, { to: 'not a phone' })).status, 422);
  assert.equal(
    (await api('POST', `${F}/${id}/sessions`, a.token, { to: uniquePhone('2557'), parameters: { x: 'y'.repeat(17_000) } })).status,
    422,
  );
  assert.equal((await api('POST', `${F}/${id}/publish`, a.token, { revision: 'x' })).status, 422);
  assert.equal((await api('GET', `${F}?status=weird`, a.token)).status, 422);
  // A legacy key (no issuer) is refused on an endpoint added since.
  assert.equal((await api('GET', F, a.legacyToken)).status, 403);
});

test(
  'a session walks the graph with replies from the chat ingress; one live per customer per account; the same customer in two accounts kept apart; ended at once',
  { timeout: 120_000 },
  async () => {
    const [a, b] = [await waTenant(), await waTenant()];
    const op = await admin('POST', `/accounts/${a.accountId}/operations`, {
      name: 'demo-wanted',
      kind: 'emit_business_event',
      config: { type: 'lead.demo_wanted' },
    });
    assert.equal(op.status, 201, op.text);
    const ids: number[] = [];
    for (const t of [a, b]) {
      const r = await load(t, { name: 'Qualify', definition: QUALIFY });
      assert.equal(r.status, 201, r.text);
      assert.equal((await api('POST', `${F}/${r.body.data.id}/publish`, t.token, {})).status, 200);
      ids.push(r.body.data.id);
    }
    const [fa, fb] = ids;
    const customer = tzCustomer();
    // The customer has written to both businesses (their 24-hour windows are open).
    await say(a, customer, 'hello A');
    await say(b, customer, 'hello B');

    const bad = await api('POST', `${F}/${fa}/sessions`, a.token, { to: 'not a phone' });
    assert.equal(bad.status, 422, bad.text);
    const sa = await api('POST', `${F}/${fa}/sessions`, a.token, { to: customer.replace('+', ''), parameters: { name: 'Amina' } });
    assert.equal(sa.status, 201, sa.text);
    const A = sa.body.data;
    assert.match(A.uid, /^FN[0-9a-f]{32}$/);
    assert.deepEqual([A.status, A.customer, A.revision, A.end_reason], ['active', customer, 1, null]);
    // One live session per customer in an account.
    const again = await api('POST', `${F}/${fa}/sessions`, a.token, { to: customer });
    assert.deepEqual([again.status, again.body.reason], [409, 'session_active'], again.text);
    // The same customer in another account: a session of its own.
    const sb = await api('POST', `${F}/${fb}/sessions`, b.token, { to: customer, parameters: { name: 'Amina B' } });
    assert.equal(sb.status, 201, sb.text);
    const B = sb.body.data;

    const waiting = (t: Tenant, f: number, uid: string) =>
      eventually(
        () => api('GET', `${F}/${f}/sessions/${uid}`, t.token),
        (r) => r.body.data?.current_state === 'ask',
        30_000,
      );
    await waiting(a, fa, A.uid);
    await waiting(b, fb, B.uid);
    await eventually(
      () => texts(customer, a.phoneNumberId),
      (m) => m.length === 2,
      20_000,
    );
    assert.deepEqual(await texts(customer, a.phoneNumberId), ['Hi Amina!', 'Interested in a demo? Reply YES or NO']);

    // A reply the split does not know loops back to the question (a loop through a wait is allowed).
    await say(a, customer, 'maybe');
    await eventually(
      () => texts(customer, a.phoneNumberId),
      (m) => m.length === 3,
      20_000,
    );
    // The customer answers account A only.
    await say(a, customer, 'Sure');
    const ended = await eventually(
      () => api('GET', `${F}/${fa}/sessions/${A.uid}`, a.token),
      (r) => r.body.data?.status === 'ended',
      30_000,
    );
    assert.deepEqual([ended.body.data.end_reason, ended.body.data.current_state], ['handed_over', 'person'], ended.body.data.error);
    const steps = (await api('GET', `${F}/${fa}/sessions/${A.uid}/steps`, a.token)).body.data.steps;
    assert.deepEqual(
      steps.map((s: any) => [s.state, s.event, s.next]),
      [
        ['welcome', 'sent', 'ask'],
        ['ask', 'reply', 'route'],
        ['route', 'no_match', 'ask'],
        ['ask', 'reply', 'route'],
        ['route', 'yes', 'qualify'],
        ['qualify', 'done', 'record'],
        ['record', 'succeeded', 'person'],
        ['person', null, null],
      ],
    );
    assert.equal(steps[3].detail.reply, 'Sure');
    assert.equal(steps[7].detail.note, 'Book a demo for Amina');
    // The lead stage went through the leads family; the operation ran as an automations run of this session.
    const leads = await api('GET', `/api/v3/leads?stage=qualified`, a.token);
    assert.deepEqual(
      leads.body.data.leads.map((l: any) => l.phone),
      [customer],
    );
    const run = await api('GET', `/api/v3/operations/runs/${steps[6].detail.run_id}`, a.token);
    assert.deepEqual([run.body.data.status, run.body.data.source], ['succeeded', `flow-session:${A.uid}`], run.text);

    // Account B's session never saw A's replies: still waiting at the question.
    const stillB = await api('GET', `${F}/${fb}/sessions/${B.uid}`, b.token);
    assert.deepEqual([stillB.body.data.status, stillB.body.data.current_state], ['active', 'ask']);
    assert.equal((await api('GET', `${F}/${fb}/sessions/${B.uid}/steps`, b.token)).body.data.steps.length, 1);
    assert.equal((await api('GET', '/api/v3/leads', b.token)).body.data.leads.length, 0);

    // Ending B's session stops its wait at once; ending it again is 409.
    const end = await api('POST', `${F}/${fb}/sessions/${B.uid}/end`, b.token, {});
    assert.equal(end.status, 200, end.text);
    assert.deepEqual([end.body.data.status, end.body.data.end_reason], ['ended', 'ended']);
    const twice = await api('POST', `${F}/${fb}/sessions/${B.uid}/end`, b.token, {});
    assert.deepEqual([twice.status, twice.body.reason], [409, 'session_ended'], twice.text);
    assert.equal((await api('POST', `${F}/${fa}/sessions/${B.uid}/end`, a.token, {})).status, 404, 'another account’s session');
    // A's customer is free again: a new session may start; the list filters by status and customer.
    const next = await api('POST', `${F}/${fa}/sessions`, a.token, { to: customer });
    assert.equal(next.status, 201, next.text);
    const listed = await api('GET', `${F}/${fa}/sessions?status=ended&customer=${encodeURIComponent(customer)}`, a.token);
    assert.deepEqual(
      listed.body.data.sessions.map((s: any) => s.uid),
      [A.uid],
    );
    assert.equal((await api('POST', `${F}/${fa}/sessions/${next.body.data.uid}/end`, a.token, {})).status, 200);

    // The events: started and ended with why, each once, for each account's own sessions.
    const ea = await flowEvents(a);
    assert.deepEqual(
      ea.map((e) => [e.event, e.session_uid, e.end_reason ?? null]),
      [
        ['flow.session.started', A.uid, null],
        ['flow.session.ended', A.uid, 'handed_over'],
        ['flow.session.started', next.body.data.uid, null],
        ['flow.session.ended', next.body.data.uid, 'ended'],
      ],
    );
    assert.deepEqual(
      (await flowEvents(b)).map((e) => [e.event, e.session_uid, e.end_reason ?? null]),
      [
        ['flow.session.started', B.uid, null],
        ['flow.session.ended', B.uid, 'ended'],
      ],
    );
    assert.ok(ea.every((e) => e.account_id === a.accountId && e.flow_id === fa && e.customer === customer));
  },
);

test(
  'templates: an unknown one goes to the provider; one the account knows and the review rejected fails the step and the session; a number not the account’s is 422',
  { timeout: 90_000 },
  async () => {
    const t = await waTenant();
    const rejected = await api('POST', '/api/v3/whatsapp/templates', t.token, {
      name: 'reject_spring_sale',
      category: 'MARKETING',
      components: [{ type: 'BODY', text: 'Spring sale!' }],
    });
    assert.equal(rejected.status, 201, rejected.text);
    await eventually(
      () => api('GET', `/api/v3/whatsapp/templates/${rejected.body.data.id}`, t.token),
      (r) => r.body.data?.status === 'rejected',
      30_000,
    );
    const flowWith = async (name: string, template: string) => {
      const r = await load(t, {
        name,
        definition: {
          initial_state: 'promo',
          states: [
            {
              name: 'promo',
              type: 'send_message',
              properties: { template: { name: template, language: 'en' } },
              transitions: [{ event: 'sent', next: 'done' }],
            },
            { name: 'done', type: 'end' },
          ],
        },
      });
      assert.equal(r.status, 201, r.text);
      assert.equal((await api('POST', `${F}/${r.body.data.id}/publish`, t.token, {})).status, 200);
      return r.body.data.id as number;
    };
    const good = await flowWith('Promo', 'summer_sale');
    const bad = await flowWith('Rejected promo', 'reject_spring_sale');

    const c1 = tzCustomer();
    const notOurs = await api('POST', `${F}/${good}/sessions`, t.token, { to: c1, sender_id: '999999999' });
    assert.equal(notOurs.status, 422, notOurs.text);
    assert.ok(notOurs.body.errors.sender_id);
    const s1 = await api('POST', `${F}/${good}/sessions`, t.token, { to: c1, sender_id: t.phoneNumberId });
    assert.equal(s1.status, 201, s1.text);
    const done = await eventually(
      () => api('GET', `${F}/${good}/sessions/${s1.body.data.uid}`, t.token),
      (r) => r.body.data?.status === 'ended',
      30_000,
    );
    assert.equal(done.body.data.end_reason, 'completed');
    // The step's message was accepted (queued); it reaches the provider on its own workflow.
    const sent = await eventually(
      async () => (await sim('GET', `/_sim/whatsapp/messages?to=${c1.replace('+', '')}`)).body.messages as any[],
      (m) => m.length === 1,
      20_000,
    );
    assert.deepEqual(
      sent.map((m) => [m.type, m.request?.body?.template?.name]),
      [['template', 'summer_sale']],
    );

    const c2 = tzCustomer();
    const s2 = await api('POST', `${F}/${bad}/sessions`, t.token, { to: c2 });
    assert.equal(s2.status, 201, s2.text);
    const failed = await eventually(
      () => api('GET', `${F}/${bad}/sessions/${s2.body.data.uid}`, t.token),
      (r) => r.body.data?.status === 'ended',
      30_000,
    );
    assert.equal(failed.body.data.end_reason, 'failed');
    assert.match(failed.body.data.error, /rejected/);
    const steps = (await api('GET', `${F}/${bad}/sessions/${s2.body.data.uid}/steps`, t.token)).body.data.steps;
    assert.deepEqual(
      steps.map((s: any) => [s.state, s.event, s.next]),
      [['promo', 'failed', null]],
    );
    // Starts for one customer at the same moment: one session, the others 409 naming it.
    const waits = await load(t, { name: 'Wait', definition: { initial_state: 'w', states: [{ name: 'w', type: 'wait_for_reply' }] } });
    assert.equal((await api('POST', `${F}/${waits.body.data.id}/publish`, t.token, {})).status, 200);
    const c3 = tzCustomer();
    const raced = await Promise.all([1, 2, 3, 4].map(() => api('POST', `${F}/${waits.body.data.id}/sessions`, t.token, { to: c3 })));
    const won = raced.filter((r) => r.status === 201);
    assert.equal(won.length, 1, raced.map((r) => r.text).join('\n'));
    for (const r of raced.filter((x) => x.status !== 201)) {
      assert.deepEqual([r.status, r.body.reason], [409, 'session_active'], r.text);
      assert.equal(r.body.details?.session_uid ?? won[0]!.body.data.uid, won[0]!.body.data.uid);
    }
    const live = await api('GET', `${F}/${waits.body.data.id}/sessions?status=active`, t.token);
    assert.deepEqual(
      live.body.data.sessions.map((x: any) => x.uid),
      [won[0]!.body.data.uid],
    );
    assert.equal((await api('POST', `${F}/${waits.body.data.id}/sessions/${won[0]!.body.data.uid}/end`, t.token, {})).status, 200);

    const ended = (await flowEvents(t)).filter((e) => e.session_uid === s2.body.data.uid && e.event === 'flow.session.ended');
    assert.deepEqual(
      ended.map((e) => [e.end_reason, /rejected/.test(e.error)]),
      [['failed', true]],
    );
  },
);
