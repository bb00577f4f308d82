import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { templateReviewWorkflowId } from '../../temporal/ids.js';
import { TEST_SECRETS } from '../../scripts/secrets.js';
import { admin, api, eventually, newTenant, sim, SIM_URL, uniquePhone, http, type Tenant } from '../support/stack.js';
import { addWaNumber, keyWith, waTenant, type WaTenant } from '../support/groups.js';

// Message templates end to end (issue 28, points 2, 4, 5 and 7; docs/templates.md): creation submits
// to the simulator's template management in the same request, its status-update webhook approves,
// rejects or pauses it (template.status_changed, the review workflow signalled), refresh reads it
// without a webhook, sync imports what the provider approved, deployments copy to another WABA of
// the same account, a template send is checked before the provider; bad input and other tenants'
// ids are refused with nothing written.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
const temporal = new Client({ connection });
after(async () => {
  await orm.close();
  await connection.close();
});
const em = () => orm.em.fork();
const T = '/api/v3/whatsapp/templates';
const tag = () => randomUUID().slice(0, 8);

interface Row {
  id: string;
  status: string;
  provider_status: string | null;
  reason: string | null;
  provider_template_id: string | null;
}
const row = (id: number) => one<Row>(em(), 'select * from message_templates where id = ?', [id]);
const until = (id: number, status: string, ms = 30_000) =>
  eventually(
    async () => row(id),
    (r) => r?.status === status,
    ms,
    250,
    `template ${id} ${status}`,
  );
const events = (t: Tenant, id: number) =>
  many<{ payload: any }>(
    em(),
    `select payload from events where account_id = ? and kind = 'template.status_changed' and (payload->>'template_id')::bigint = ? order by occurred_at, id`,
    [t.accountId, id],
  );
const rowsOf = async (t: Tenant) =>
  Number((await one<{ n: string }>(em(), 'select count(*) as n from message_templates where account_id = ?', [t.accountId]))!.n);
const simCreates = async () => (await sim('GET', '/_sim/whatsapp/templates/config')).body.creates as number;

const order = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  language: 'en',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}', example: { header_text: ['A-1'] } },
    { type: 'BODY', text: 'Hi {{1}}, your order {{2}} is on its way.', example: { body_text: [['Ann', 'A-1']] } },
    { type: 'FOOTER', text: 'Thank you' },
    {
      type: 'BUTTONS',
      buttons: [
        { type: 'QUICK_REPLY', text: 'OK' },
        { type: 'URL', text: 'Track', url: 'https://x.tz/t/{{1}}', example: ['https://x.tz/t/A-1'] },
      ],
    },
  ],
  ...extra,
});
const simple = (name: string) => ({
  name,
  category: 'MARKETING',
  components: [{ type: 'BODY', text: 'Hello {{1}}, see you soon.', example: { body_text: [['Ann']] } }],
});
async function create(t: Tenant, body: unknown) {
  const r = await api('POST', T, t.token, body);
  assert.equal(r.status, 201, r.text);
  return r.body.data;
}
const send = (t: WaTenant, template: Record<string, unknown>) =>
  api('POST', '/api/v3/whatsapp/send', t.token, {
    recipient: uniquePhone('2556'),
    sender_id: t.phoneNumberId,
    message_type: 'template',
    template,
  });
const bodyParams = (n: number) => [{ type: 'body', parameters: Array.from({ length: n }, (_, i) => ({ type: 'text', text: `v${i}` })) }];
const headerParams = [{ type: 'header', parameters: [{ type: 'text', text: 'A-9' }] }];

test('created and submitted in the request; the webhook approves it (template.status_changed, the review signalled); sends checked', async () => {
  const t = await waTenant('86');
  const name = `order_update_${tag()}`;
  const before = await simCreates();
  const tpl = await create(t, order(name));
  assert.equal(tpl.status, 'pending', JSON.stringify(tpl));
  assert.equal(tpl.business_account_id, `WABA${t.accountId}`);
  assert.ok(/^\d+$/.test(tpl.provider_template_id), 'the provider’s id is kept');
  assert.deepEqual(tpl.parameters, { header: 1, body: 2 });
  assert.equal(tpl.source, 'created');
  assert.equal(await simCreates(), before + 1, 'submitted once');

  await until(tpl.id, 'approved');
  const got = await api('GET', `${T}/${tpl.id}`, t.token);
  assert.equal(got.status, 200, got.text);
  assert.deepEqual([got.body.data.status, got.body.data.provider_status, got.body.data.reason], ['approved', 'APPROVED', null]);
  assert.ok(got.body.data.reviewed_at);
  const ev = await events(t, tpl.id);
  assert.equal(ev.length, 1, 'one event for one change');
  assert.deepEqual(
    [ev[0].payload.event, ev[0].payload.status, ev[0].payload.previous_status, ev[0].payload.source, ev[0].payload.name],
    ['template.status_changed', 'approved', 'pending', 'webhook', name],
  );
  // The review workflow was told by the webhook and ended; its state says so.
  const review = temporal.workflow.getHandle(templateReviewWorkflowId(t.accountId, String(tpl.id)));
  const state = await review.result();
  assert.equal(state.phase, 'reviewed');
  assert.equal(state.status, 'approved');
  assert.ok(state.signals >= 1, JSON.stringify(state));
  const desc = await review.describe();
  assert.equal(desc.searchAttributes.ResourceType?.[0], 'message_template');

  // Sendable, with the parameters it takes; a wrong count is 422 before the provider.
  const ok = await send(t, { name, language: 'en', components: [...headerParams, ...bodyParams(2)] });
  assert.equal(ok.status, 201, ok.text);
  const wrong = await send(t, { name, language: 'en', components: [...headerParams, ...bodyParams(1)] });
  assert.equal(wrong.status, 422, wrong.text);
  assert.match(wrong.body.errors['template.components'][0], /takes 2 body parameter\(s\); 1 were given/);
  const noHeader = await send(t, { name, language: 'en', components: bodyParams(2) });
  assert.equal(noHeader.status, 422, noHeader.text);
  assert.match(noHeader.body.errors['template.components'][0], /header parameter/);
  // The accepted send reached the simulator, which knows the template as approved.
  await eventually(
    async () => (await api('GET', `/api/v3/whatsapp/${ok.body.data.messages[0].uid}`, t.token)).body.data,
    (m) => ['sent', 'delivered', 'read'].includes(m?.status),
    30_000,
    300,
    'the template message sent',
  );
});

test('in review: a send is refused; refresh reads the decision without a webhook; a name never seen is forwarded', async () => {
  const t = await waTenant('86');
  const name = `hold_${tag()}`;
  const tpl = await create(t, simple(name));
  assert.equal(tpl.status, 'pending');
  const early = await send(t, { name, language: 'en', components: bodyParams(1) });
  assert.equal(early.status, 422, early.text);
  assert.match(early.body.errors['template.name'][0], /still in review \(pending\); only an approved template can be sent/);

  // The provider decides but no webhook comes: refresh asks.
  const decided = await sim('POST', `/_sim/whatsapp/templates/${tpl.provider_template_id}/status`, { event: 'APPROVED', webhook: false });
  assert.equal(decided.status, 200, decided.text);
  const r = await api('POST', `${T}/${tpl.id}/refresh`, t.token, {});
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.data.status, 'approved');
  assert.ok(r.body.data.last_checked_at);
  const ev = await events(t, tpl.id);
  assert.deepEqual(
    ev.map((e) => [e.payload.status, e.payload.source]),
    [['approved', 'refresh']],
  );
  // Asked again (or polled by the review), the same status changes nothing and emits nothing.
  const again = await api('POST', `${T}/${tpl.id}/refresh`, t.token, {});
  assert.equal(again.body.data.status, 'approved');
  assert.equal((await events(t, tpl.id)).length, 1, 'nothing changed, nothing emitted');

  const unseen = await send(t, { name: `never_seen_${tag()}`, language: 'en', components: bodyParams(1) });
  assert.equal(unseen.status, 201, `a template we never saw goes to the provider: ${unseen.text}`);
});

test('rejected with its reason; paused after approval (FIRST_PAUSE) and refused on send', async () => {
  const t = await waTenant('86');
  const rejected = await create(t, simple(`reject_${tag()}`));
  const paused = await create(t, simple(`pause_${tag()}`));
  const r = await until(rejected.id, 'rejected');
  assert.equal(r!.reason, 'INVALID_FORMAT');
  const ev = await events(t, rejected.id);
  assert.deepEqual([ev[0].payload.status, ev[0].payload.reason], ['rejected', 'INVALID_FORMAT']);
  const p = await until(paused.id, 'paused');
  assert.equal(p!.reason, 'FIRST_PAUSE');
  assert.deepEqual(
    (await events(t, paused.id)).map((e) => e.payload.status),
    ['approved', 'paused'],
  );
  const refused = await send(t, { name: paused.name, language: 'en', components: bodyParams(1) });
  assert.equal(refused.status, 422, refused.text);
  assert.match(refused.body.errors['template.name'][0], /is paused/);
});

test('sync imports the provider’s approved templates; a duplicate at the provider is adopted; deployments copy to another WABA of the account', async () => {
  const t = await waTenant('86');
  const waba = `WABA${t.accountId}`;
  // Templates made at the provider directly (as in WhatsApp Manager).
  const graph = (body: object) =>
    http('POST', `${SIM_URL}/whatsapp/v21.0/${waba}/message_templates`, {
      body: { language: 'en', ...body },
      headers: { authorization: `Bearer ${TEST_SECRETS.WHATSAPP_ACCESS_TOKEN}` },
    });
  const made = await graph(simple(`instant_${tag()}`));
  assert.equal(made.status, 200, made.text);
  assert.equal(made.body.status, 'APPROVED');
  const pending = await graph(simple(`hold_${tag()}`));
  assert.equal(pending.status, 200, pending.text);

  const s = await api('POST', `${T}/sync`, t.token, {});
  assert.equal(s.status, 200, s.text);
  assert.deepEqual(s.body.data, { business_account_ids: [waba], imported: 1, updated: 0, unchanged: 0, complete: true });
  const synced = (await api('GET', `${T}?business_account_id=${waba}`, t.token)).body.data.templates;
  assert.equal(synced.length, 1);
  assert.deepEqual([synced[0].source, synced[0].status, synced[0].provider_template_id], ['synced', 'approved', made.body.id]);
  const again = await api('POST', `${T}/sync`, t.token, { business_account_id: waba });
  assert.deepEqual([again.body.data.imported, again.body.data.unchanged], [0, 1]);

  // A template the provider has already (our answer was lost): adopted, not submitted twice.
  const dupName = `hold_${tag()}`;
  const atProvider = await graph(simple(dupName));
  const adopted = await create(t, simple(dupName));
  assert.equal(adopted.provider_template_id, atProvider.body.id);

  // Deployments: an approved template to the account's other WABA.
  const other = `WABA${t.accountId}B`;
  const n = await admin('POST', `/accounts/${t.accountId}/phone-numbers`, {
    number: uniquePhone('2556'),
    capabilities: ['whatsapp'],
    provider_phone_number_id: `86${t.accountId}${Date.now() % 1_000_000}9`,
    business_account_id: other,
  });
  assert.equal(n.status, 201, n.text);
  const source = synced[0];
  const d = await api('POST', `${T}/${source.id}/deployments`, t.token, { business_account_id: other });
  assert.equal(d.status, 201, d.text);
  assert.deepEqual(
    [d.body.data.business_account_id, d.body.data.name, d.body.data.source, d.body.data.deployed_from, d.body.data.status],
    [other, source.name, 'deployed', source.id, 'approved'],
  );
  assert.notEqual(d.body.data.provider_template_id, source.provider_template_id, 'a copy of its own at the provider');
  const twice = await api('POST', `${T}/${source.id}/deployments`, t.token, { business_account_id: other });
  assert.equal(twice.status, 409, twice.text);
  const same = await api('POST', `${T}/${source.id}/deployments`, t.token, { business_account_id: waba });
  assert.equal(same.status, 422, same.text);
  const notApproved = await api('POST', `${T}/${adopted.id}/deployments`, t.token, { business_account_id: other });
  assert.equal(notApproved.status, 409, notApproved.text);
  assert.equal(notApproved.body.reason, 'template_not_approved');

  // Delete: at the provider and here.
  const del = await api('DELETE', `${T}/${d.body.data.id}`, t.token);
  assert.equal(del.status, 200, del.text);
  assert.equal((await api('GET', `${T}/${d.body.data.id}`, t.token)).status, 404);
  const atSim = (await sim('GET', '/_sim/whatsapp/templates')).body.templates as { id: string }[];
  assert.ok(!atSim.some((x) => x.id === d.body.data.provider_template_id), 'deleted at the provider');
});

test('bad input: clear 422s (components, names, languages, categories), 404 for unknown ids; nothing written, nothing submitted', async () => {
  const t = await waTenant('86');
  const before = await rowsOf(t);
  const creates = await simCreates();
  const body = (name: string) => `${name}_${tag()}`;
  const cases: [string, unknown, string][] = [
    ['no body', { ...simple(body('a')), components: [{ type: 'FOOTER', text: 'x' }] }, 'components'],
    [
      'eleven buttons',
      {
        ...simple(body('b')),
        components: [
          simple('x').components[0],
          { type: 'BUTTONS', buttons: Array.from({ length: 11 }, (_, i) => ({ type: 'QUICK_REPLY', text: `b${i}` })) },
        ],
      },
      'components.1.buttons',
    ],
    [
      'examples that do not match the placeholders',
      { ...simple(body('c')), components: [{ type: 'BODY', text: 'Hi {{1}} and {{2}} today', example: { body_text: [['only one']] } }] },
      'components.0.example.body_text',
    ],
    [
      'a placeholder without example',
      { ...simple(body('d')), components: [{ type: 'BODY', text: 'Hi {{1}} today' }] },
      'components.0.example.body_text',
    ],
    [
      'a gap in the placeholders',
      { ...simple(body('e')), components: [{ type: 'BODY', text: 'Hi {{1}} and {{3}} x', example: { body_text: [['a', 'b']] } }] },
      'components.0.text',
    ],
    [
      'a body starting with a placeholder',
      { ...simple(body('f')), components: [{ type: 'BODY', text: '{{1}} hi', example: { body_text: [['a']] } }] },
      'components.0.text',
    ],
    [
      'a footer placeholder',
      { ...simple(body('g')), components: [simple('x').components[0], { type: 'FOOTER', text: 'Bye {{1}}' }] },
      'components.1.text',
    ],
    ['two bodies', { ...simple(body('h')), components: [simple('x').components[0], simple('y').components[0]] }, 'components.1.type'],
    ['upper case name', simple('Order_Update'), 'name'],
    ['a name with spaces', simple('order update'), 'name'],
    ['a language that is no locale code', { ...simple(body('i')), language: 'english' }, 'language'],
    ['an upper-case language', { ...simple(body('j')), language: 'EN' }, 'language'],
    ['no category', { ...simple(body('k')), category: 'PROMO' }, 'category'],
    ['a WABA that is not the account’s', { ...simple(body('l')), business_account_id: 'WABA0' }, 'business_account_id'],
  ];
  for (const [what, b, field] of cases) {
    const r = await api('POST', T, t.token, b);
    assert.equal(r.status, 422, `${what}: ${r.text}`);
    assert.equal(r.body.status, 'error', what);
    assert.ok(
      Object.keys(r.body.errors ?? {}).some(
        (k) => k === field || k.startsWith(`${field}.`) || k.endsWith(`.${field}`) || k === `body.${field}`,
      ),
      `${what}: errors name ${field}: ${r.text}`,
    );
  }
  assert.equal(await rowsOf(t), before, 'nothing written');
  assert.equal(await simCreates(), creates, 'nothing submitted');

  for (const id of ['999999999', 'abc', '0']) {
    for (const [method, path, b] of [
      ['GET', `${T}/${id}`, undefined],
      ['POST', `${T}/${id}/refresh`, {}],
      ['POST', `${T}/${id}/deployments`, { business_account_id: `WABA${t.accountId}` }],
      ['DELETE', `${T}/${id}`, undefined],
    ] as const) {
      const r = await api(method, path, t.token, b);
      assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
    }
  }
  // The provider's own refusal at submission (a check no rule of ours foresees): 422, nothing kept.
  const refusedByProvider = await api('POST', T, t.token, simple(body('refuse')));
  assert.equal(refusedByProvider.status, 422, refusedByProvider.text);
  assert.equal(refusedByProvider.body.reason, 'provider_refused');
  assert.match(refusedByProvider.body.message, /The provider refused the template/);
  assert.equal(await rowsOf(t), before, 'the refused template is not kept');

  // The same name twice in one language on one WABA.
  const name = body('dup');
  await create(t, simple(name));
  const dup = await api('POST', T, t.token, simple(name));
  assert.equal(dup.status, 409, dup.text);
  assert.equal(dup.body.reason, 'template_exists');
  const other = await api('POST', T, t.token, { ...simple(name), language: 'sw' });
  assert.equal(other.status, 201, 'another language is another template');
});

test('tenancy and permissions: another account’s template ids are 404 on every path; view cannot manage; a legacy key is refused', async () => {
  const a = await waTenant('86');
  const b = await waTenant('86');
  const tpl = await create(a, simple(`hold_${tag()}`));
  await addWaNumber(a, '86', '7');
  for (const [method, path, body] of [
    ['GET', `${T}/${tpl.id}`, undefined],
    ['POST', `${T}/${tpl.id}/refresh`, {}],
    ['POST', `${T}/${tpl.id}/deployments`, { business_account_id: `WABA${b.accountId}` }],
    ['DELETE', `${T}/${tpl.id}`, undefined],
  ] as const) {
    const r = await api(method, path, b.token, body);
    assert.equal(r.status, 404, `${method} ${path}: ${r.text}`);
  }
  const list = await api('GET', `${T}?business_account_id=WABA${a.accountId}`, b.token);
  assert.equal(list.status, 200, list.text);
  assert.equal(list.body.data.templates.length, 0);
  const onA = await api('POST', T, b.token, { ...simple(`x_${tag()}`), business_account_id: `WABA${a.accountId}` });
  assert.equal(onA.status, 422, onA.text);
  const syncA = await api('POST', `${T}/sync`, b.token, { business_account_id: `WABA${a.accountId}` });
  assert.equal(syncA.status, 422, syncA.text);
  assert.equal((await api('GET', `${T}/${tpl.id}`, a.token)).body.data.status, 'pending', 'A’s template untouched');

  const viewer = await keyWith(a, ['communications.templates.view']);
  assert.equal((await api('GET', `${T}/${tpl.id}`, viewer)).status, 200);
  const denied = await api('POST', T, viewer, simple(`v_${tag()}`));
  assert.equal(denied.status, 403, denied.text);
  const none = await keyWith(a, ['communications.send']);
  assert.equal((await api('GET', T, none)).status, 403);
  assert.equal((await api('GET', T, a.legacyToken)).status, 403, 'a key with no recorded issuer');
  const t = await newTenant();
  const noWaba = await api('POST', T, t.token, simple(`n_${tag()}`));
  assert.equal(noWaba.status, 422, noWaba.text);
});
