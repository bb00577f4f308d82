import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { Client, Connection } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { formSessionWorkflowId } from '../../workflows/forms/form-session.starter.js';
import type { FormSessionState } from '../../workflows/forms/form-session.js';
import { admin, api, eventually, sim, uniquePhone, type Tenant } from '../support/stack.js';
import { keyWith, waTenant, type WaTenant } from '../support/groups.js';

// Forms end to end (issue 29, points 1, 4 for the REST door, 5; docs/forms.md): malformed
// definitions refused with nothing stored; publish freezes a version, edits make a new draft; a
// send makes one session and its workflow (form-session/<account>/<session>); the native form is
// answered through the simulator's nfm_reply and an answer that does not fit is asked again in the
// chat; question by question with re-asks and an attempt cap; form.submitted and form.expired in the
// outbox; answers per recipient and in aggregate; the Forms module switch and forms.* permissions;
// another account's forms and sessions are not found, and its customer's replies never reach them.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await sim('DELETE', '/_sim/whatsapp/customers/policy');
  await orm.close();
  await connection.close();
});
const em = () => orm.em.fork();
const F = '/api/v3/forms';

const survey = (extra: Record<string, unknown> = {}) => ({
  name: 'Customer survey',
  title: 'Quick survey',
  intro: 'Tell us about your visit',
  submit_label: 'Send',
  questions: [
    { key: 'full_name', type: 'text', label: 'Your name?', min_length: 2, max_length: 60 },
    { key: 'age', type: 'number', label: 'Your age?', integer: true, min: 18, max: 120 },
    {
      key: 'plan',
      type: 'choice',
      label: 'Which plan?',
      options: [
        { id: 'basic', title: 'Basic' },
        { id: 'pro', title: 'Pro' },
      ],
    },
    { key: 'visit', type: 'date', label: 'When did you visit?', min: '2020-01-01' },
    { key: 'phone', type: 'phone', label: 'Another number?', required: false },
    { key: 'email', type: 'email', label: 'Your e-mail?' },
  ],
  ...extra,
});

async function create(t: Tenant, body: unknown = survey()) {
  const r = await api('POST', F, t.token, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
async function publish(t: Tenant, id: string) {
  const r = await api('POST', `${F}/${id}/publish`, t.token, {});
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
/** The customer wrote in first (the 24-hour window is open), as a chat a form goes into would be. */
const openWindow = (t: WaTenant, customer: string) =>
  sim('POST', '/_sim/whatsapp/window', { from: customer, phone_number_id: t.phoneNumberId });
const say = (t: WaTenant, customer: string, text: string) =>
  sim('POST', '/_sim/whatsapp/inbound', { from: customer, phone_number_id: t.phoneNumberId, text });

interface SessionRow {
  uid: string;
  status: string;
  answers: Record<string, unknown>;
  current_question: string | null;
  invalid_attempts: number;
  end_reason: string | null;
  prompts: string[];
  account_id: number;
}
const row = (uid: string) => one<SessionRow>(em(), 'select * from form_sessions where uid = ?', [uid]);
const until = (uid: string, ok: (r: SessionRow) => boolean, what: string, ms = 30_000) =>
  eventually(
    () => row(uid),
    (r) => r !== null && ok(r),
    ms,
    200,
    what,
  ) as Promise<SessionRow>;
const formCount = async (t: Tenant) =>
  Number((await one<{ n: string }>(em(), 'select count(*) as n from forms where account_id = ?', [t.accountId]))!.n);
const sessionCount = async (t: Tenant) =>
  Number((await one<{ n: string }>(em(), 'select count(*) as n from form_sessions where account_id = ?', [t.accountId]))!.n);
const events = (t: Tenant, kind: string) =>
  many<{ payload: any }>(em(), `select payload from events where account_id = ? and kind = ? order by occurred_at, id`, [
    t.accountId,
    kind,
  ]);
/** What the simulator received for a customer, oldest first. */
const sent = async (customer: string) =>
  (
    (await sim('GET', `/_sim/whatsapp/messages?to=${encodeURIComponent(customer)}`)).body.messages as {
      id: string;
      type: string;
      request: { body: any };
    }[]
  ).sort(() => 0);
const texts = async (customer: string) =>
  (await sent(customer)).map((m) => m.request.body.text?.body ?? m.request.body.interactive?.body?.text ?? '');

test('malformed definitions are 422 with every field named and nothing stored; publish freezes, edits make a new draft; an unpublished form is not sent', async () => {
  const t = await waTenant('71');
  const bad: [string, unknown, string][] = [
    [
      'duplicate key',
      survey({
        questions: [
          { key: 'a', type: 'text', label: 'A' },
          { key: 'a', type: 'number', label: 'B' },
        ],
      }),
      'questions.1.key',
    ],
    ['choice without options', survey({ questions: [{ key: 'c', type: 'choice', label: 'C', options: [] }] }), 'questions.0.options'],
    ['min above max', survey({ questions: [{ key: 'n', type: 'number', label: 'N', min: 5, max: 1 }] }), 'questions.0.min'],
    ['bad pattern', survey({ questions: [{ key: 't', type: 'text', label: 'T', pattern: '([a-z' }] }), 'questions.0.pattern'],
    ['bad date bound', survey({ questions: [{ key: 'd', type: 'date', label: 'D', max: '2026-02-30' }] }), 'questions.0.max'],
    ['rule of another type', survey({ questions: [{ key: 'e', type: 'email', label: 'E', integer: true }] }), 'questions.0.integer'],
    ['reminder after expiry', survey({ remind_after_minutes: 90, expire_after_minutes: 60 }), 'remind_after_minutes'],
    ['unknown type', survey({ questions: [{ key: 'x', type: 'signature', label: 'X' }] }), ''],
    ['no questions', survey({ questions: [] }), ''],
    ['bad key', survey({ questions: [{ key: 'Bad Key', type: 'text', label: 'X' }] }), ''],
    ['flow_cta too long', survey({ submit_label: 'x'.repeat(21) }), ''],
  ];
  assert.equal((await api('POST', F, t.token, [1, 2])).status, 400, 'a body that is not an object');
  for (const [what, body, field] of bad) {
    const r = await api('POST', F, t.token, body);
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.equal(r.body.status, 'error', what);
    if (field) assert.ok(r.body.errors?.[field], `${what} names ${field}: ${r.text}`);
  }
  assert.equal(await formCount(t), 0, 'nothing stored');

  const form = await create(t);
  assert.match(form.id, /^frm_/);
  assert.deepEqual([form.status, form.latest_version, form.draft_changed, form.versions], ['draft', null, true, []]);
  assert.equal(form.draft.questions[0].required, true, 'required by default');
  assert.equal(form.draft.expire_after_minutes, 240);

  // Not published: the send is refused before anything is written.
  const early = await api('POST', `${F}/${form.id}/sends`, t.token, { to: uniquePhone('2557') });
  assert.equal(early.status, 409, early.text);
  assert.equal(early.body.reason, 'not_published');
  assert.equal(await sessionCount(t), 0);

  const v1 = await publish(t, form.id);
  assert.equal(v1.version, 1);
  assert.equal(v1.id, `${form.id}/v1`);
  assert.equal(v1.whatsapp_flow.name, `${form.id}_v1`);
  const screen = v1.whatsapp_flow.flow_json.screens[0];
  assert.equal(screen.terminal, true);
  const fields = screen.layout.children[0].children.map((c: any) => c.type);
  assert.deepEqual(fields, ['TextInput', 'TextInput', 'RadioButtonsGroup', 'DatePicker', 'TextInput', 'TextInput', 'Footer']);
  assert.equal((await publish(t, form.id)).version, 1, 'an unchanged draft publishes no second version');

  // An edit changes the draft only; a bad edit changes nothing.
  const badEdit = await api('PATCH', `${F}/${form.id}`, t.token, { questions: [{ key: 'n', type: 'number', label: 'N', min: 9, max: 1 }] });
  assert.equal(badEdit.status, 422, badEdit.text);
  const edit = await api('PATCH', `${F}/${form.id}`, t.token, {
    title: 'Short survey',
    questions: [{ key: 'ok', type: 'text', label: 'OK?' }],
  });
  assert.equal(edit.status, 200, edit.text);
  assert.deepEqual([edit.body.data.status, edit.body.data.latest_version, edit.body.data.draft_changed], ['published', 1, true]);
  const still = await api('GET', `${F}/${form.id}/versions/1`, t.token);
  assert.equal(still.status, 200, still.text);
  assert.equal(still.body.data.definition.questions.length, 6, 'version 1 is frozen');
  assert.equal(still.body.data.definition.title, 'Quick survey');
  const v2 = await publish(t, form.id);
  assert.equal(v2.version, 2);
  assert.equal(v2.definition.questions[0].key, 'ok');
  const got = await api('GET', `${F}/${form.id}`, t.token);
  assert.deepEqual(
    got.body.data.versions.map((v: any) => v.version),
    [1, 2],
  );
  const list = await api('GET', `${F}?per_page=5`, t.token);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.body.data.forms[0].id, form.id);
  assert.equal(list.body.data.pagination.total, 1);

  // Sends that name nothing usable: 422, no session.
  for (const body of [
    {},
    { to: uniquePhone('2557'), conversation_id: 'whatsapp:1:+255700000001' },
    { to: 'not a phone' },
    { to: uniquePhone('2557'), version: 9 },
    { to: uniquePhone('2557'), sender_id: '999999' },
    { conversation_id: 'msg_doesnotexist' },
    { to: uniquePhone('2557'), mode: 'carrier-pigeon' },
  ]) {
    const r = await api('POST', `${F}/${form.id}/sends`, t.token, body);
    assert.equal(r.status, 422, `${JSON.stringify(body)}: ${r.text}`);
  }
  assert.equal(await sessionCount(t), 0);
  for (const path of [`${F}/frm_nope`, `${F}/${form.id}/versions/7`, `${F}/${form.id}/versions/x`, `${F}/${form.id}/sessions/fss_nope`]) {
    const r = await api('GET', path, t.token);
    assert.equal(r.status, 404, `${path}: ${r.text}`);
  }
  assert.equal((await api('POST', `${F}/frm_nope/publish`, t.token, {})).status, 404);
  assert.equal((await api('POST', `${F}/frm_nope/sends`, t.token, { to: uniquePhone('2557') })).status, 404);
});

test('native form: one Flow message; the nfm_reply is checked, what fits is kept, what does not is asked again in the chat; submitted with form.submitted', async () => {
  const t = await waTenant('72');
  const form = await create(t, survey({ thank_you: 'Asante!' }));
  await publish(t, form.id);
  const customer = uniquePhone('2557');
  await openWindow(t, customer);
  const s = await api('POST', `${F}/${form.id}/sends`, t.token, { to: customer });
  assert.equal(s.status, 201, s.text);
  const session = s.body.data;
  assert.match(session.id, /^fss_/);
  assert.deepEqual([session.status, session.mode, session.version, session.recipient], ['active', 'native', 1, customer]);
  assert.equal(session.conversation_id, `whatsapp:${t.phoneNumberId}:${customer}`);

  // The workflow: readable id, search attributes, memo and a state query.
  const handle = temporal.workflow.getHandle(formSessionWorkflowId(t.accountId, session.id));
  const desc = await handle.describe();
  assert.equal(desc.type, 'formSessionWorkflow');
  assert.deepEqual(desc.searchAttributes.AccountId, [String(t.accountId)]);
  assert.deepEqual(desc.searchAttributes.ResourceId, [session.id]);
  assert.equal(desc.memo?.form_id, form.id);

  const flow = await eventually(
    async () => (await sent(customer)).find((m) => m.request.body.interactive?.type === 'flow'),
    (m) => m !== undefined,
    20_000,
    200,
    'the flow message',
  );
  const params = flow!.request.body.interactive.action.parameters;
  assert.deepEqual([params.flow_token, params.flow_name, params.flow_cta, params.mode], [session.id, `${form.id}_v1`, 'Send', 'published']);
  assert.equal((await handle.query<FormSessionState>('state')).phase, 'waiting');

  // age does not fit (a stringified number out of range), the rest does: kept, age asked in the chat.
  const answers = {
    full_name: 'Asha Mwinyi',
    age: '12',
    plan: 'pro',
    visit: '2026-03-01',
    email: 'Asha@Example.COM',
    extra_field: 'ignored',
  };
  const done = await sim('POST', '/_sim/whatsapp/flows/complete', { wamid: flow!.id, answers });
  assert.equal(done.status, 200, done.text);
  assert.equal(done.body.delivered, true, done.text);
  const partial = await until(session.id, (r) => r.current_question === 'age', 'age asked again');
  assert.equal(partial.status, 'active');
  assert.deepEqual(partial.answers, { full_name: 'Asha Mwinyi', plan: 'pro', visit: '2026-03-01', phone: null, email: 'Asha@example.com' });
  assert.ok(!('age' in partial.answers), 'an answer that does not fit is never stored');
  await eventually(
    () => texts(customer),
    (x) => x.some((b) => b.includes('at least 18') && b.includes('Your age?')),
    20_000,
    200,
    'the re-ask',
  );

  // A redelivered nfm_reply (same wamid) changes nothing; a second completion of the same form is not a new answer either.
  const again = await sim('POST', '/_sim/whatsapp/inbound', {
    from: customer,
    phone_number_id: t.phoneNumberId,
    id: done.body.wamid,
    type: 'interactive',
    interactive: done.body.message.interactive,
  });
  assert.equal(again.status, 200, again.text);

  await say(t, customer, 'twenty');
  await until(session.id, (r) => r.invalid_attempts === 2, 'second wrong answer counted');
  await say(t, customer, '34');
  const final = await until(session.id, (r) => r.status === 'submitted', 'submitted');
  assert.equal(final.answers.age, 34);
  assert.equal(final.current_question, null);
  const result = await handle.result();
  assert.equal(result.phase, 'submitted');
  const ev = await events(t, 'form.submitted');
  assert.equal(ev.length, 1, 'one event');
  assert.deepEqual(
    [ev[0].payload.form_id, ev[0].payload.session_id, ev[0].payload.recipient, ev[0].payload.answers.age, ev[0].payload.version],
    [form.id, session.id, customer, 34, 1],
  );
  await eventually(
    () => texts(customer),
    (x) => x.includes('Asante!'),
    20_000,
    200,
    'the thanks',
  );

  const read = await api('GET', `${F}/${form.id}/sessions/${session.id}`, t.token);
  assert.equal(read.status, 200, read.text);
  assert.equal(read.body.data.status, 'submitted');
  assert.ok(read.body.data.submitted_at);
  // Malformed response_json: read as nothing, the session stays as it is.
  const junk = await sim('POST', '/_sim/whatsapp/flows/complete', { wamid: flow!.id, response_json: '{not json' });
  assert.equal(junk.status, 200, junk.text);
  const cancelEnded = await api('POST', `${F}/${form.id}/sessions/${session.id}/cancel`, t.token, {});
  assert.equal(cancelEnded.status, 409, cancelEnded.text);
});

test('question by question into a conversation: each answer checked and re-asked; answers per recipient and in aggregate; the attempt cap expires with form.expired', async () => {
  const t = await waTenant('73');
  const form = await create(t);
  await publish(t, form.id);
  const a = uniquePhone('2557');
  await openWindow(t, a);
  const s = await api('POST', `${F}/${form.id}/sends`, t.token, { conversation_id: `whatsapp:${t.phoneNumberId}:${a}`, mode: 'questions' });
  assert.equal(s.status, 201, s.text);
  const uid = s.body.data.id;
  await until(uid, (r) => r.current_question === 'full_name', 'first question');
  await eventually(
    () => texts(a),
    (x) => x.some((b) => b.startsWith('1/6. Your name?')),
    20_000,
    200,
    'question 1',
  );
  // [what the customer writes, the question then waited on, the key stored and its value (none: re-asked)]
  const steps: [string, string, string | null, unknown][] = [
    ['A', 'full_name', null, null], // too short
    ['Juma Hassan', 'age', 'full_name', 'Juma Hassan'],
    ['34.5', 'age', null, null], // not whole
    ['34', 'plan', 'age', 34],
    ['2', 'visit', 'plan', 'pro'], // the second option, by its number
    ['31/02/2026', 'visit', null, null], // no such day
    ['15/03/2026', 'phone', 'visit', '2026-03-15'],
    ['skip', 'email', 'phone', null], // optional
    ['nope', 'email', null, null],
  ];
  for (const [text, next, key, value] of steps) {
    const before = (await row(uid))!.invalid_attempts;
    await say(t, a, text);
    const r = await until(
      uid,
      (x) =>
        x.current_question === next &&
        (key === null ? x.invalid_attempts === before + 1 : x.invalid_attempts === 0 && key in x.answers && x.answers[key] === value),
      `after "${text}"`,
    );
    assert.equal(r.status, 'active');
  }
  await say(t, a, 'juma@mail.co.tz');
  const done = await until(uid, (r) => r.status === 'submitted', 'submitted');
  assert.deepEqual(done.answers, {
    full_name: 'Juma Hassan',
    age: 34,
    plan: 'pro',
    visit: '2026-03-15',
    phone: null,
    email: 'juma@mail.co.tz',
  });
  // The choice was asked as a list; a wrong answer was told why.
  const asked = await sent(a);
  assert.ok(
    asked.some((m) => m.request.body.interactive?.type === 'list'),
    'the choice as a list',
  );
  assert.ok((await texts(a)).some((b) => b.includes('at least 2 characters')));

  // A second recipient by phone in a form they give up on: three answers that do not fit end it.
  const b = uniquePhone('2557');
  await openWindow(t, b);
  const s2 = await api('POST', `${F}/${form.id}/sends`, t.token, { to: b, mode: 'questions' });
  assert.equal(s2.status, 201, s2.text);
  await until(s2.body.data.id, (r) => r.current_question === 'full_name', 'first question');
  await say(t, b, 'Ok Bakari');
  await until(s2.body.data.id, (r) => r.current_question === 'age', 'age');
  for (const [n, wrong] of ['old', '7', '-1'].entries()) {
    await say(t, b, wrong);
    if (n < 2) await until(s2.body.data.id, (r) => r.invalid_attempts === n + 1, `wrong ${n + 1}`);
  }
  const expired = await until(s2.body.data.id, (r) => r.status === 'expired', 'expired');
  assert.equal(expired.end_reason, 'invalid_answers');
  assert.deepEqual(expired.answers, { full_name: 'Ok Bakari' });
  const ex = await events(t, 'form.expired');
  assert.equal(ex.length, 1);
  assert.deepEqual([ex[0].payload.reason, ex[0].payload.session_id], ['invalid_answers', s2.body.data.id]);
  // A text after the end reaches nothing.
  await say(t, b, '40');

  // A third one is cancelled: ended at once, its workflow stops.
  const c = uniquePhone('2557');
  await openWindow(t, c);
  const s3 = await api('POST', `${F}/${form.id}/sends`, t.token, { to: c });
  const cancel = await api('POST', `${F}/${form.id}/sessions/${s3.body.data.id}/cancel`, t.token, {});
  assert.equal(cancel.status, 200, cancel.text);
  assert.deepEqual([cancel.body.data.status, cancel.body.data.end_reason], ['cancelled', 'cancelled']);
  assert.equal((await temporal.workflow.getHandle(formSessionWorkflowId(t.accountId, s3.body.data.id)).result()).phase, 'cancelled');

  const perRecipient = await api('GET', `${F}/${form.id}/sessions?recipient=${encodeURIComponent(a)}`, t.token);
  assert.equal(perRecipient.status, 200, perRecipient.text);
  assert.equal(perRecipient.body.data.sessions.length, 1);
  assert.equal(perRecipient.body.data.sessions[0].answers.email, 'juma@mail.co.tz');
  const submitted = await api('GET', `${F}/${form.id}/sessions?status=submitted`, t.token);
  assert.equal(submitted.body.data.pagination.total, 1);
  const badFilter = await api('GET', `${F}/${form.id}/sessions?status=lost`, t.token);
  assert.equal(badFilter.status, 422, badFilter.text);

  const summary = await api('GET', `${F}/${form.id}/answers`, t.token);
  assert.equal(summary.status, 200, summary.text);
  assert.deepEqual(summary.body.data.sessions, { total: 3, active: 0, submitted: 1, expired: 1, cancelled: 1 });
  const q = Object.fromEntries(summary.body.data.questions.map((x: any) => [x.key, x]));
  assert.equal(q.full_name.answered, 1);
  assert.equal(q.phone.answered, 0, 'a skipped question is not an answer');
  assert.deepEqual(q.plan.options, [
    { id: 'basic', title: 'Basic', count: 0 },
    { id: 'pro', title: 'Pro', count: 1 },
  ]);
  assert.deepEqual([q.age.min, q.age.max, q.age.average], [34, 34, 34]);
});

test('tenancy: another account’s forms and sessions are not found; the same customer in two accounts reaches only the session of the account written to', async () => {
  const a = await waTenant('74');
  const b = await waTenant('75');
  const customer = uniquePhone('2557');
  const fa = await create(a);
  await publish(a, fa.id);
  const fb = await create(b);
  await publish(b, fb.id);
  await openWindow(a, customer);
  await openWindow(b, customer);
  const sa = (await api('POST', `${F}/${fa.id}/sends`, a.token, { to: customer, mode: 'questions' })).body.data;
  const sb = (await api('POST', `${F}/${fb.id}/sends`, b.token, { to: customer })).body.data;
  await until(sa.id, (r) => r.current_question === 'full_name', 'A asks');
  const flowB = await eventually(
    async () => (await sent(customer)).find((m) => m.request.body.interactive?.action?.parameters?.flow_token === sb.id),
    (m) => m !== undefined,
    20_000,
    200,
    'B’s flow message',
  );

  // B's key on A's paths: 404 everywhere, nothing changes.
  for (const [method, path, body] of [
    ['GET', `${F}/${fa.id}`],
    ['PATCH', `${F}/${fa.id}`, { name: 'mine now' }],
    ['POST', `${F}/${fa.id}/publish`, {}],
    ['POST', `${F}/${fa.id}/sends`, { to: customer }],
    ['GET', `${F}/${fa.id}/sessions`],
    ['GET', `${F}/${fa.id}/sessions/${sa.id}`],
    ['GET', `${F}/${fb.id}/sessions/${sa.id}`],
    ['POST', `${F}/${fa.id}/sessions/${sa.id}/cancel`, {}],
    ['POST', `${F}/${fb.id}/sessions/${sa.id}/cancel`, {}],
    ['GET', `${F}/${fa.id}/answers`],
    ['GET', `${F}/${fa.id}/versions/1`],
  ] as [string, string, unknown?][]) {
    const r = await api(method, path, b.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  assert.equal((await api('GET', F, b.token)).body.data.pagination.total, 1, 'B lists only its own');

  // The customer answers B's business number in text: B's session is native and waits for its form, A's is untouched.
  await say(b, customer, 'Zawadi');
  // B's flow completed with A's session's token (a token of another account): nothing happens to A.
  const forged = await sim('POST', '/_sim/whatsapp/inbound', {
    from: customer,
    phone_number_id: b.phoneNumberId,
    type: 'interactive',
    context: { id: flowB!.id },
    interactive: {
      type: 'nfm_reply',
      nfm_reply: { name: 'flow', body: 'Sent', response_json: JSON.stringify({ flow_token: sa.id, full_name: 'Forged' }) },
    },
  });
  assert.equal(forged.status, 200, forged.text);
  // Then the customer answers A in A's chat: A moves on.
  await say(a, customer, 'Neema Ali');
  const ra = await until(sa.id, (r) => r.current_question === 'age', 'A got its own answer');
  assert.deepEqual(ra.answers, { full_name: 'Neema Ali' });
  const rb = await row(sb.id);
  assert.deepEqual([rb!.status, rb!.answers, rb!.account_id], ['active', {}, b.accountId]);
  // B's own form completed by the customer: B's session, B's event only.
  await sim('POST', '/_sim/whatsapp/flows/complete', {
    wamid: flowB!.id,
    answers: { full_name: 'Zawadi', age: '40', plan: 'basic', visit: '2026-01-02', email: 'z@x.co' },
  });
  await until(sb.id, (r) => r.status === 'submitted', 'B submitted');
  assert.equal((await events(a, 'form.submitted')).length, 0);
  assert.equal((await events(b, 'form.submitted')).length, 1);
  assert.equal((await row(sa.id))!.status, 'active');
  await api('POST', `${F}/${fa.id}/sessions/${sa.id}/cancel`, a.token, {});
});

test('forms.* permissions on a live issuer, the Forms module switch (operator API), MCP tools on the forms server', async () => {
  const t = await waTenant('76');
  const form = await create(t);
  const viewer = await keyWith(t, ['forms.view']);
  assert.equal((await api('GET', `${F}/${form.id}`, viewer)).status, 200);
  const refused = await api('POST', F, viewer, survey());
  assert.equal(refused.status, 403, refused.text);
  assert.equal((await api('POST', `${F}/${form.id}/publish`, viewer, {})).status, 403);
  const manager = await keyWith(t, ['forms.view', 'forms.manage']);
  assert.equal((await api('POST', `${F}/${form.id}/publish`, manager, {})).status, 201);
  const noSend = await api('POST', `${F}/${form.id}/sends`, manager, { to: uniquePhone('2557') });
  assert.equal(noSend.status, 403, noSend.text);
  const legacy = await api('GET', F, t.legacyToken);
  assert.ok([401, 403].includes(legacy.status), `a key with no issuer is refused: ${legacy.text}`);

  const off = await admin('PATCH', `/accounts/${t.accountId}/forms/settings`, { enabled: false });
  assert.equal(off.status, 200, off.text);
  assert.equal(off.body.data.enabled, false);
  for (const [method, path, body] of [
    ['GET', F],
    ['POST', F, survey()],
    ['GET', `${F}/${form.id}`],
    ['POST', `${F}/${form.id}/sends`, { to: uniquePhone('2557') }],
    ['GET', `${F}/${form.id}/answers`],
  ] as [string, string, unknown?][]) {
    const r = await api(method, path, t.token, body);
    assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
    assert.equal(r.body.reason, 'module_disabled');
    assert.match(r.body.message, /Forms module is switched off/);
  }
  assert.equal(await formCount(t), 1, 'nothing written while off');
  assert.equal((await admin('GET', `/accounts/${t.accountId}/forms/settings`)).body.data.enabled, false);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/forms/settings`, { enabled: 'yes' })).status, 422);
  assert.equal((await admin('PATCH', `/accounts/${t.accountId}/forms/settings`, { enabled: true })).body.data.enabled, true);
  assert.equal((await api('GET', F, t.token)).status, 200);

  // The same operations as MCP tools, on the forms server (the manifest is generated from the definitions).
  const manifest = await api('GET', '/api-docs/mcp.json', null);
  assert.equal(manifest.status, 200, manifest.text);
  const formsServer = JSON.stringify(manifest.body).includes('send_form');
  assert.ok(formsServer, 'send_form is in the MCP manifest');
  const doc = await api('GET', '/api-docs/openapi.json', null);
  assert.ok(doc.body.paths['/api/v3/forms/{form}/sends']?.post, 'the send is in the OpenAPI document');
});
