import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, newTenant, type Tenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';
import { paymentsOf, paymentsOrm } from '../support/payments.js';
import { many } from '../../entities/db.js';
import { DomainError } from '../../services/platform/errors.js';
import { PAYMENT_STATES, type PaymentState } from '../../domain/payments/index.js';

// Payments reads (issue 26, points 1, 4, 5, 7, 9): the list with the contract's exact semantics, the
// detail by UUID or reference, permissions and tenancy on every path and MCP tool, 405 for every
// write method, and the services the workflow will call (request, moves, refunds) on the real
// database: illegal moves recorded and never applied, concurrent refunds never over the amount,
// the ledger balanced.
const orm = await paymentsOrm(12);
after(() => orm.close());
const pay = paymentsOf(orm);
const P = '/api/v3/payments';

const list = (t: Tenant, query = '', token = t.token) => api('GET', `${P}${query}`, token);
const ids = (r: { body: { data: { id: string }[] } }) => r.body.data.map((p) => p.id);

/** One payment in every state of the table, oldest first (draft … refunded), for one subject each. */
async function everyState(t: Tenant) {
  const made: { id: string; reference: string; state: PaymentState }[] = [];
  for (const state of PAYMENT_STATES) {
    const p = await pay.inState(t.accountId, state, { subjectId: `order-${state}`, subjectType: 'order' });
    made.push({ id: p.id, reference: p.reference, state });
  }
  return made;
}

test('the list: newest first, {status, data, meta} with the contract’s meta, and every state filter', async () => {
  const t = await newTenant();
  const made = await everyState(t);
  // The refunds settled for partly_refunded and refunded are payments too (two more rows, newest among theirs).
  const all = await list(t, '?per_page=100');
  assert.equal(all.status, 200, all.text);
  assert.deepEqual(Object.keys(all.body).sort(), ['data', 'meta', 'status']);
  assert.equal(all.body.status, 'success');
  assert.deepEqual(all.body.meta, { current_page: 1, per_page: 100, total: 11, last_page: 1 });
  const times = all.body.data.map((p: { created_at: string }) => p.created_at);
  assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
  const byId = new Map(all.body.data.map((p: { id: string }) => [p.id, p]));
  for (const m of made) assert.equal((byId.get(m.id) as { state: string }).state, m.state, m.state);

  const states = async (q: string) =>
    (await list(t, `?per_page=100&state=${encodeURIComponent(q)}`)).body.data
      .filter((p: { is_refund: boolean }) => !p.is_refund)
      .map((p: { state: string }) => p.state)
      .sort();
  assert.deepEqual(await states('open'), ['authorised', 'draft', 'pending']);
  assert.deepEqual(await states(' OPEN '), ['authorised', 'draft', 'pending']);
  assert.deepEqual(await states(' PAID '), ['paid'], 'trimmed and lower-cased');
  assert.deepEqual(await states('Partly_Refunded'), ['partly_refunded']);
  assert.deepEqual(await states('expired'), ['expired']);
  for (const unfiltered of ['all', ' All ', 'settled', 'paid,failed', '', 'x'.repeat(300)]) {
    const r = await list(t, `?per_page=100&state=${encodeURIComponent(unfiltered)}`);
    assert.equal(r.status, 200, `${unfiltered}: ${r.text}`);
    assert.equal(r.body.meta.total, 11, `state=${unfiltered} leaves the list unfiltered`);
  }
  // The two settled refunds are paid payments of their own.
  const paid = await list(t, '?state=paid');
  assert.equal(paid.body.meta.total, 3);
  assert.equal(paid.body.data.filter((p: { is_refund: boolean }) => p.is_refund).length, 2);

  // subject_id, and subject_id with state.
  const one = await list(t, '?subject_id=order-failed');
  assert.deepEqual(ids(one), [made.find((m) => m.state === 'failed')!.id]);
  assert.equal((await list(t, '?subject_id=order-failed&state=open')).body.meta.total, 0);
  assert.equal((await list(t, '?subject_id=order-refunded&state=refunded')).body.meta.total, 1);
  assert.equal((await list(t, '?subject_id=nothing')).body.meta.total, 0);
});

test('the list’s pages: default 25, cap 100, limit wins over per_page, pages past the end, bad numbers 422', async () => {
  const t = await newTenant();
  for (let i = 0; i < 27; i++) await pay.request(t.accountId, { subjectId: `s-${i}`, amountMinor: 100 + i });
  const first = await list(t);
  assert.equal(first.body.data.length, 25);
  assert.deepEqual(first.body.meta, { current_page: 1, per_page: 25, total: 27, last_page: 2 });
  const second = await list(t, '?page=2');
  assert.equal(second.body.data.length, 2);
  assert.equal(new Set([...ids(first), ...ids(second)]).size, 27, 'the pages do not overlap');
  assert.deepEqual(
    ids(second),
    ['s-1', 's-0'].map((s) => [...first.body.data, ...second.body.data].find((p) => p.subject_id === s).id),
  );

  assert.deepEqual((await list(t, '?per_page=10&page=3')).body.meta, { current_page: 3, per_page: 10, total: 27, last_page: 3 });
  assert.equal((await list(t, '?per_page=10&page=3')).body.data.length, 7);
  assert.equal((await list(t, '?per_page=5&limit=2')).body.data.length, 2, 'limit wins over per_page');
  assert.equal((await list(t, '?per_page=5&limit=2')).body.meta.per_page, 2);
  assert.equal((await list(t, '?per_page=500')).body.meta.per_page, 100, 'above 100 reads as 100');
  assert.equal((await list(t, '?limit=1e9')).body.meta.per_page, 100, '1e9 is a number above the cap');
  const past = await list(t, '?page=9');
  assert.equal(past.status, 200);
  assert.deepEqual(past.body, { status: 'success', data: [], meta: { current_page: 9, per_page: 25, total: 27, last_page: 2 } });

  for (const q of ['limit=0', 'limit=-1', 'limit=abc', 'per_page=0', 'per_page=1.5', 'page=0', 'page=-2', 'page=x', 'page=1e300']) {
    const r = await list(t, `?${q}`);
    assert.equal(r.status, 422, `${q}: ${r.text}`);
    assert.equal(r.body.status, 'error');
    assert.ok(Object.keys(r.body.errors ?? {}).length > 0, `${q} names its field: ${r.text}`);
  }
  const empty = await newTenant();
  assert.deepEqual((await list(empty)).body, {
    status: 'success',
    data: [],
    meta: { current_page: 1, per_page: 25, total: 0, last_page: 1 },
  });
});

test('the detail by UUID and by reference: summary, created_by, timeline oldest first, ledger by entry_no, refunds newest first', async () => {
  const t = await newTenant();
  const p = await pay.request(t.accountId, {
    amountMinor: 1_200_000,
    currency: 'TZS',
    subjectId: 'order-7',
    subjectType: 'order',
    payer: '+255700000001',
    method: 'mobile_money',
    provider: 'simulated-momo',
  });
  assert.match(p.reference, /^PAY-\d{8}-\d{8}$/);
  await pay.move(t.accountId, p.id, 'pending', 'workflow', 'pushed to the payer');
  await pay.move(t.accountId, p.id, 'paid', 'provider', 'callback SUCCESSFUL');
  const r1 = await pay.refund(t.accountId, p.id, 200_000, 'one item returned');
  const r2 = await pay.refund(t.accountId, p.reference, 300_000, 'late delivery');
  await pay.move(t.accountId, r1.id, 'paid', 'provider');

  const byId = await api('GET', `${P}/${p.id}`, t.token);
  assert.equal(byId.status, 200, byId.text);
  const d = byId.body.data;
  assert.deepEqual(Object.keys(byId.body).sort(), ['data', 'status']);
  assert.equal(d.id, p.id);
  assert.equal(d.state, 'partly_refunded');
  assert.equal(d.amount_minor, 1_200_000);
  assert.equal(d.amount, 'TZS 12,000');
  assert.equal(d.refunded_minor, 500_000, 'refunds requested and not failed count (as Stripe’s amount_refunded)');
  assert.equal(d.refundable_minor, 700_000);
  assert.equal(d.refunded, 'TZS 5,000');
  assert.equal(d.is_open, false);
  assert.equal(d.is_settled, true);
  assert.deepEqual(d.next_states, ['partly_refunded', 'refunded']);
  assert.equal(d.subject_id, 'order-7');
  assert.equal(d.subject_type, 'order');
  assert.equal(d.is_refund, false);
  assert.equal(d.refund_of, null);
  assert.equal(d.attempts, 1);
  assert.equal(d.created_by, 'system:test');
  assert.ok(d.settled_at);
  assert.deepEqual(
    d.timeline.map((e: { old_state: string | null; new_state: string; source: string }) => [e.old_state, e.new_state, e.source]),
    [
      [null, 'draft', 'test'],
      ['draft', 'pending', 'workflow'],
      ['pending', 'paid', 'provider'],
      ['paid', 'partly_refunded', 'refund'],
    ],
  );
  assert.match(d.timeline[3].message, new RegExp(`Refund ${r1.reference} of TZS 2,000 settled`));
  assert.deepEqual(
    d.ledger.map((l: { entry_no: number; kind: string; direction: string; account: string; amount_minor: number }) => [
      l.entry_no,
      l.kind,
      l.direction,
      l.account,
      l.amount_minor,
    ]),
    [
      [1, 'charge', 'debit', 'provider_clearing', 1_200_000],
      [2, 'charge', 'credit', 'customer_payments', 1_200_000],
    ],
  );
  assert.deepEqual(
    d.refunds.map((r: { id: string }) => r.id),
    [r2.id, r1.id],
    'newest first',
  );
  assert.equal(d.refunds[0].state, 'pending');
  assert.equal(d.refunds[0].reason, 'late delivery');
  assert.equal(d.refunds[0].refund_of, p.id);
  assert.equal(d.refunds[0].is_refund, true);

  // The same payment by its reference, in any case and with spaces around it.
  for (const ref of [p.reference, p.reference.toLowerCase()]) {
    const r = await api('GET', `${P}/${encodeURIComponent(ref)}`, t.token);
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body, byId.body);
  }
  // The settled refund's own ledger gives the money back; it is never refunded itself.
  const refund = (await api('GET', `${P}/${r1.id}`, t.token)).body.data;
  assert.deepEqual(refund.next_states, []);
  assert.deepEqual(
    refund.ledger.map((l: { kind: string; direction: string; account: string; amount_minor: number }) => [
      l.kind,
      l.direction,
      l.account,
      l.amount_minor,
    ]),
    [
      ['refund', 'debit', 'customer_payments', 200_000],
      ['refund', 'credit', 'provider_clearing', 200_000],
    ],
  );

  // Malformed and unknown references name nothing.
  for (const bad of [
    'PAY-1',
    'PAY-x-1',
    'pay',
    '42',
    'not-a-uuid',
    'PAY-20261127-99999999',
    '00000000-0000-4000-8000-000000000000',
    `PAY-${'9'.repeat(40)}-1`,
  ]) {
    const r = await api('GET', `${P}/${encodeURIComponent(bad)}`, t.token);
    assert.equal(r.status, 404, `${bad}: ${r.text}`);
    assert.equal(r.body.status, 'error');
  }
});

test('permissions and tenancy: payments.view on a live issuer; another account’s payment is 404 on every path and tool', async () => {
  const owner = await newTenant();
  const p = await pay.inState(owner.accountId, 'paid', { subjectId: 'mine' });
  const other = await newTenant();
  await pay.request(other.accountId, { subjectId: 'theirs' });

  for (const path of [P, `${P}/${p.id}`]) {
    assert.equal((await api('GET', path, owner.legacyToken)).status, 403, `${path}: a key with no issuer`);
    assert.equal((await api('GET', path, null)).status, 401);
  }
  const noPermission = await newTenant({ permissions: ['contacts.view'] });
  const refused = await api('GET', P, noPermission.token);
  assert.equal(refused.status, 403);
  assert.match(refused.body.message, /payments\.view/);
  const viewer = await newTenant({ permissions: ['payments.view'] });
  assert.equal((await api('GET', P, viewer.token)).status, 200);

  for (const ref of [p.id, p.reference]) assert.equal((await api('GET', `${P}/${ref}`, other.token)).status, 404, ref);
  const theirs = await list(other, '?state=all');
  assert.deepEqual(
    theirs.body.data.map((x: { subject_id: string }) => x.subject_id),
    ['theirs'],
  );
  assert.equal((await list(other, '?subject_id=mine')).body.meta.total, 0);
  // tenant_id in the query selects nothing.
  assert.equal((await list(other, `?tenant_id=${owner.accountId}`)).body.meta.total, 1);

  // The issuer deactivated: refused; active again: read.
  const user = (patch: Record<string, unknown>) => admin('PATCH', `/accounts/${owner.accountId}/users/${owner.userId}`, patch);
  assert.equal((await user({ active: false })).status, 200);
  assert.equal((await api('GET', `${P}/${p.id}`, owner.token)).status, 403);
  assert.equal((await list(owner)).status, 403);
  assert.equal((await user({ active: true })).status, 200);
  assert.equal((await list(owner)).status, 200);

  // MCP: the payments server lists and reads with the same rules.
  const cred = await admin('POST', `/accounts/${other.accountId}/mcp-credentials`, { name: 'assistant', user_id: other.userId });
  assert.equal(cred.status, 201, cred.text);
  await withMcpServer('payments', cred.body.data.token, async (c) => {
    const tools = (await c.listTools()).tools;
    assert.deepEqual(tools.map((x) => x.name).sort(), ['get_payment', 'list_payments']);
    for (const tool of tools) assert.equal(tool.annotations?.readOnlyHint, true, tool.name);
    const listed = (await c.callTool({ name: 'list_payments', arguments: { state: 'all' } })) as {
      structuredContent?: { data: { subject_id: string }[]; meta: unknown };
    };
    assert.deepEqual(
      listed.structuredContent?.data.map((x) => x.subject_id),
      ['theirs'],
    );
    for (const ref of [p.id, p.reference]) {
      const r = (await c.callTool({ name: 'get_payment', arguments: { payment: ref } })) as {
        isError?: boolean;
        content: { type: string; text?: string }[];
      };
      assert.equal(r.isError, true, `${ref}: ${JSON.stringify(r)}`);
      assert.match(r.content.find((b) => b.type === 'text')?.text ?? '', /not found/i);
    }
  });
  const ownerCred = await admin('POST', `/accounts/${owner.accountId}/mcp-credentials`, { name: 'assistant', user_id: owner.userId });
  await withMcpServer('payments', ownerCred.body.data.token, async (c) => {
    const r = (await c.callTool({ name: 'get_payment', arguments: { payment: p.reference } })) as {
      structuredContent?: { id: string; ledger: unknown[] };
    };
    assert.equal(r.structuredContent?.id, p.id);
    assert.equal(r.structuredContent?.ledger.length, 2);
  });
});

test('no write on REST: POST, PUT, PATCH and DELETE on the payment paths answer 405 with Allow', async () => {
  const t = await newTenant();
  const p = await pay.request(t.accountId);
  for (const path of [P, `${P}/${p.id}`, `${P}/${p.reference}`])
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const r = await api(method, path, t.token, method === 'DELETE' ? undefined : { state: 'paid' });
      assert.equal(r.status, 405, `${method} ${path}: ${r.text}`);
      assert.match(r.headers.get('allow') ?? '', /\bGET\b/, `${method} ${path}`);
      assert.equal(r.body.status, 'error');
    }
  assert.equal((await api('GET', `${P}/${p.id}`, t.token)).body.data.state, 'draft', 'nothing moved');
});

test('moves: an illegal move is refused and recorded with its source, never applied; refund states follow refunds only', async () => {
  const t = await newTenant();
  const p = await pay.request(t.accountId, { amountMinor: 5000, currency: 'USD' });
  const refused = await pay.move(t.accountId, p.id, 'paid', 'provider', 'late callback');
  assert.equal(refused.applied, false);
  assert.equal(refused.payment.state, 'draft');
  assert.equal((await pay.move(t.accountId, p.id, 'pending', 'workflow')).applied, true);
  assert.equal((await pay.move(t.accountId, p.id, 'paid', 'provider')).applied, true);
  const direct = await pay.move(t.accountId, p.id, 'refunded', 'operator');
  assert.equal(direct.applied, false, 'refunded follows from a refund settling');
  assert.equal((await pay.move(t.accountId, p.id, 'pending', 'provider', 'duplicate callback')).applied, false);

  const d = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(d.state, 'paid');
  assert.deepEqual(
    d.timeline.map((e: { old_state: string | null; new_state: string; source: string }) => [e.old_state, e.new_state, e.source]),
    [
      [null, 'draft', 'test'],
      ['draft', 'draft', 'provider'],
      ['draft', 'pending', 'workflow'],
      ['pending', 'paid', 'provider'],
      ['paid', 'paid', 'operator'],
      ['paid', 'paid', 'provider'],
    ],
  );
  assert.match(d.timeline[1].message, /Refused: draft → paid.*late callback/);
  assert.match(d.timeline[5].message, /Refused: paid → pending/);
  assert.equal(d.ledger.length, 2, 'refused moves write no ledger');

  // A failed payment keeps the provider's words and may be retried (failed → pending counts an attempt).
  const f = await pay.inState(t.accountId, 'pending');
  await pay.move(t.accountId, f.id, 'failed', 'provider', 'insufficient funds');
  const retried = await pay.move(t.accountId, f.id, 'pending', 'operator');
  assert.equal(retried.applied, true);
  assert.equal(retried.payment.attempts, 2);
  assert.equal(retried.payment.last_error, 'insufficient funds');

  await assert.rejects(pay.move(t.accountId, '00000000-0000-4000-8000-000000000000', 'paid'), (e: DomainError) => e.kind === 'not_found');
  const other = await newTenant();
  await assert.rejects(pay.move(other.accountId, p.id, 'paid'), (e: DomainError) => e.kind === 'not_found', 'another account’s payment');
});

test('refunds: zero, negative or more than refundable refused; unsettled refused; a failed refund gives its headroom back', async () => {
  const t = await newTenant();
  const p = await pay.inState(t.accountId, 'paid', { amountMinor: 1000, currency: 'USD' });
  for (const bad of [0, -5, 1.5, 1001, Number.MAX_SAFE_INTEGER + 1])
    await assert.rejects(
      pay.refund(t.accountId, p.id, bad),
      (e: DomainError) => e.kind === 'invalid' && 'amount_minor' in (e.detail.errors ?? {}),
      String(bad),
    );
  const open = await pay.request(t.accountId);
  await assert.rejects(pay.refund(t.accountId, open.id, 1), (e: DomainError) => e.kind === 'conflict');
  const r = await pay.refund(t.accountId, p.id, 600);
  await assert.rejects(pay.refund(t.accountId, r.id, 1), (e: DomainError) => e.kind === 'conflict', 'a refund is not refunded');
  await assert.rejects(pay.refund(t.accountId, p.id, 401), (e: DomainError) => e.kind === 'invalid' && /At most 400/.test(e.message));

  // The refund fails: its 600 are refundable again, and taking it back to pending takes them again.
  await pay.move(t.accountId, r.id, 'failed', 'provider', 'reversal refused');
  let parent = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(parent.refunded_minor, 0);
  assert.equal(parent.refundable_minor, 1000);
  assert.equal(parent.state, 'paid');
  const second = await pay.refund(t.accountId, p.id, 700);
  const back = await pay.move(t.accountId, r.id, 'pending', 'operator');
  assert.equal(back.applied, false, 'only 300 left for a 600 refund');
  await pay.move(t.accountId, second.id, 'paid', 'provider');
  await pay.move(t.accountId, r.id, 'cancelled', 'operator');
  const last = await pay.refund(t.accountId, p.id, 300);
  await pay.move(t.accountId, last.id, 'pending', 'provider', 'duplicate');
  await pay.move(t.accountId, last.id, 'paid', 'provider');
  parent = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(parent.state, 'refunded');
  assert.equal(parent.refunded_minor, 1000);
  assert.equal(parent.refundable_minor, 0);
  assert.deepEqual(parent.next_states, []);
  await assert.rejects(pay.refund(t.accountId, p.id, 1), (e: DomainError) => e.kind === 'conflict' || e.kind === 'invalid');
});

test('concurrent partial refunds never refund more than was paid, and every ledger balances with gapless entry numbers', async () => {
  const t = await newTenant();
  const p = await pay.inState(t.accountId, 'paid', { amountMinor: 10_000, currency: 'USD' });
  const tries = 40;
  const outcomes = await Promise.allSettled(Array.from({ length: tries }, () => pay.refund(t.accountId, p.id, 700)));
  const taken = outcomes.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<{ id: string }>).value);
  const refusals = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason as DomainError);
  assert.equal(taken.length, 14, '14 × 700 = 9,800 fit in 10,000; the 15th would not');
  assert.ok(
    refusals.every((e) => e instanceof DomainError && e.kind === 'invalid'),
    String(refusals.find((e) => !(e instanceof DomainError))),
  );
  let parent = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(parent.refunded_minor, 9_800);
  assert.equal(parent.refunded_minor + parent.refundable_minor, parent.amount_minor);
  // A refund writes its rows before the headroom decides: the 26 it refused are rolled back whole.
  assert.equal(parent.refunds.length, 14, 'no refund row is left by a refused request');

  // Settle half, fail the rest, all at once; then take what is left in concurrent 100s.
  await Promise.all(taken.map((r, i) => pay.move(t.accountId, r.id, i % 2 ? 'paid' : 'failed', 'provider')));
  parent = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(parent.refunded_minor, 7 * 700);
  assert.equal(parent.state, 'partly_refunded');
  const more = await Promise.allSettled(Array.from({ length: 60 }, () => pay.refund(t.accountId, p.id, 100)));
  const tookMore = more.filter((o) => o.status === 'fulfilled').map((o) => (o as PromiseFulfilledResult<{ id: string }>).value);
  assert.equal(tookMore.length, 51, '5,100 left, in hundreds');
  await Promise.all(tookMore.map((r) => pay.move(t.accountId, r.id, 'paid', 'provider')));
  parent = (await api('GET', `${P}/${p.id}`, t.token)).body.data;
  assert.equal(parent.state, 'refunded');
  assert.equal(parent.refunded_minor, 10_000);
  assert.equal(parent.refundable_minor, 0);

  // The ledger: per payment and per ledger account, debits equal credits; entry_no is 1..n without a gap.
  const legs = await many<{ payment_id: string; entry_no: number; direction: string; account: string; amount_minor: string }>(
    orm.em.fork(),
    `select payment_id, entry_no, direction, account, amount_minor from ledger_entries where account_id = ? order by payment_id, entry_no`,
    [t.accountId],
  );
  const perPayment = new Map<string, { sum: number; nos: number[] }>();
  const perAccount = new Map<string, number>();
  for (const l of legs) {
    const signed = (l.direction === 'debit' ? 1 : -1) * Number(l.amount_minor);
    const e = perPayment.get(l.payment_id) ?? { sum: 0, nos: [] };
    e.sum += signed;
    e.nos.push(l.entry_no);
    perPayment.set(l.payment_id, e);
    perAccount.set(l.account, (perAccount.get(l.account) ?? 0) + signed);
  }
  assert.equal(perPayment.size, 1 + 7 + 51, 'the payment and each settled refund');
  for (const [id, e] of perPayment) {
    assert.equal(e.sum, 0, `payment ${id} balances`);
    assert.deepEqual(
      e.nos,
      e.nos.map((_, i) => i + 1),
      `payment ${id} numbers its entries without a gap`,
    );
  }
  assert.deepEqual(Object.fromEntries(perAccount), { provider_clearing: 0, customer_payments: 0 }, 'everything collected was given back');
  const timeline = parent.timeline.map((e: { new_state: string }) => e.new_state);
  assert.equal(timeline.filter((s: string) => s === 'partly_refunded').length, 7 + 50, 'one partial move per settled refund but the last');
  assert.equal(timeline.at(-1), 'refunded');
});
