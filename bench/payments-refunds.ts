// Concurrent partial refunds of one payment (issue 26, point 8), on a private stack. Each phase
// takes a paid payment of TZS 10,000 (1,000,000 minor units, made paid through the payments
// service: requested, then moved pending → paid, which writes its charge legs) and fires `--refunds`
// partial refunds at it from `--clients` concurrent loops, of 500 to 2,500 minor units each
// (1,500 on average: together about 1.5 times the amount, so about a third must be refused):
//   1. the floor: a bare guarded UPDATE loop through pg, the headroom statement alone
//      (`update payments set refunded_minor = refunded_minor + $1 where id = $2 and
//      amount_minor - refunded_minor >= $1`), autocommit, on a pool of `--pool` connections;
//   2. the same statement in a transaction of its own (BEGIN; UPDATE; COMMIT: the row stays
//      locked over the commit's round trip too);
//   3. the operator API, POST /admin/v1/accounts/{account}/payments/{payment}/refunds (HTTP,
//      operator auth, the account's lookup, requestRefund: refund row, timeline row, headroom);
//   4. the service, requestRefund, in this process on an ORM pool of `--pool` connections
//      (no HTTP), then the floor once more (the machine is shared: the two floors bracket the run).
// Then every accepted refund of phases 3 and 4 that is still open settles (recordMove → paid,
// `--clients` at a time: each writes its refund legs and moves its parent under the parent's row
// lock), and the bench asserts what must hold: no answer but 201 and 422; a refund row per
// accepted refund; 0 over-refunded (refunded_minor ≤ amount_minor, right after the refunds and at
// the end); refunded_minor = the amounts of the refunds that hold headroom (not failed, expired or
// cancelled); refunded + refundable = amount; while no refund gave its amount back, refunded_minor
// = the sum accepted and nothing refused while it would still have fitted (what is left is below
// the smallest amount refused); the parent partly_refunded or refunded by its settled refunds; the
// ledger balanced (debits = credits per payment, entry_no gapless, and per ledger account over the
// account the charges less the settled refunds). These hold whatever else moves the refunds (a
// refund workflow started by the API), so the bench does not depend on who drives them.
//   npm run bench:payments-refunds [-- --refunds 1000 --clients 50 --pool 20]
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { benchStack, jsonPoster, load, numberArg, type LoadResult } from './lib.js';
import { openOrm } from '../entities/orm.js';
import { DomainError } from '../services/platform/errors.js';
import { recordMove, requestPayment, requestRefund } from '../services/payments/index.js';

const refunds = numberArg('refunds', 1000);
const clients = numberArg('clients', 50);
// The API's own pool (config POOL_DEFAULTS.api): the floor and the in-process service get the same.
const poolMax = numberArg('pool', 20);
const AMOUNT = 1_000_000;
/** The i-th refund's amount: 500 to 2,500 minor units in steps of 100, 1,500 on average. */
const amountOf = (i: number) => 500 + ((i * 7919) % 21) * 100;

const started = performance.now();
const progress = (msg: string) => process.stderr.write(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${msg}\n`);

const { stack, dir, accountId, operator } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: poolMax });
const orm = await openOrm(stack.databaseUrl, poolMax);
const out: Record<string, unknown> = { refunds, clients, pool: poolMax, amountMinor: AMOUNT, machine: `${os.cpus().length} cores` };
const loadAverage: Record<string, number> = {};
const noteLoad = (phase: string) => {
  loadAverage[phase] = Math.round(os.loadavg()[0] * 10) / 10;
};
out.loadAverage1m = loadAverage;
const problems: string[] = [];
const must = (ok: boolean, what: string) => {
  if (!ok) problems.push(what);
};

/** A paid payment of AMOUNT: requested and moved through the service, so its charge legs are on the ledger. */
let charged = 0;
async function paidPayment(label: string) {
  charged++;
  const p = await requestPayment(orm.em.fork(), {
    accountId,
    amountMinor: AMOUNT,
    currency: 'TZS',
    subjectType: 'order',
    subjectId: `bench-${label}`,
    payer: '+255700000001',
    source: 'bench',
    createdBy: 'system:bench',
  });
  for (const to of ['pending', 'paid'] as const) {
    const m = await recordMove(orm.em.fork(), { accountId, payment: p.id, to, source: 'bench' });
    if (!m.applied) throw new Error(`${label}: ${to} refused: ${m.refusal}`);
  }
  return p;
}

const figures = (r: LoadResult) => ({
  perSecond: r.perSecond,
  seconds: r.seconds,
  p50Ms: r.p50,
  p99Ms: r.p99,
  statuses: r.statuses,
  errors: r.errors,
});

/**
 * What the refunds of one phase left: the parent's columns beside the sum of what was accepted, and
 * how many of its refunds have already given their amount back (failed, expired, cancelled: none
 * here unless something else drives the refunds, such as a refund workflow started by the API).
 */
async function headroom(paymentId: string, accepted: number[], refused: number[]) {
  const row = (
    await pool.query(
      `select amount_minor::bigint as a, refunded_minor::bigint as r, state,
              (select count(*)::int from payments where refund_of = $1 and state in ('failed', 'expired', 'cancelled')) as released
         from payments where id = $1`,
      [paymentId],
    )
  ).rows[0];
  const acceptedSum = accepted.reduce((s, n) => s + n, 0);
  const amount = Number(row.a);
  const refunded = Number(row.r);
  const left = amount - refunded;
  const minRefused = refused.length ? Math.min(...refused) : null;
  return {
    amount,
    refunded,
    refundable: left,
    accepted: accepted.length,
    acceptedSum,
    refused: refused.length,
    minRefused,
    released: row.released as number,
    overRefunded: Math.max(0, refunded - amount),
  };
}

try {
  const post = jsonPoster(stack.apiUrl, { authorization: `Bearer ${operator}` }, clients);

  // 1. The floor: the guarded headroom statement alone.
  const GUARDED =
    'update payments set refunded_minor = refunded_minor + $1, updated_at = now() where id = $2 and amount_minor - refunded_minor >= $1';
  // inTransaction: BEGIN; the statement; COMMIT, so the row stays locked for one more round trip
  // (the commit's), as in a service transaction that takes the headroom last.
  const floorRun = async (label: string, inTransaction = false) => {
    const p = await paidPayment(label);
    const accepted: number[] = [];
    const refused: number[] = [];
    noteLoad(label);
    const r = await load(clients, refunds, 600, async (i) => {
      const a = amountOf(i);
      let u: pg.QueryResult;
      if (inTransaction) {
        const c = await pool.connect();
        try {
          await c.query('begin');
          u = await c.query(GUARDED, [a, p.id]);
          await c.query('commit');
        } finally {
          c.release();
        }
      } else u = await pool.query(GUARDED, [a, p.id]);
      (u.rowCount === 1 ? accepted : refused).push(a);
      return u.rowCount === 1 ? 'taken' : 'refused';
    });
    const h = await headroom(p.id, accepted, refused);
    must(h.overRefunded === 0 && h.refunded === h.acceptedSum, `${label}: refunded ${h.refunded}, accepted ${h.acceptedSum}`);
    must(h.minRefused === null || h.refundable < h.minRefused, `${label}: ${h.refundable} left but ${h.minRefused} refused`);
    progress(`${label}: ${r.perSecond}/s, ${h.accepted} taken (${h.acceptedSum}), ${h.refused} refused, ${h.refundable} left`);
    return { ...figures(r), ...h };
  };
  out.floorBefore = await floorRun('bare guarded UPDATE');
  out.floorInTransaction = await floorRun('guarded UPDATE in its own transaction', true);

  // 2. The operator API.
  const viaHttp = await paidPayment('operator API');
  const httpAccepted: { id: string; amount: number }[] = [];
  const httpRefused: number[] = [];
  noteLoad('operatorApi');
  const httpRun = await load(clients, refunds, 600, async (i) => {
    const a = amountOf(i);
    const res = await post(`/admin/v1/accounts/${accountId}/payments/${viaHttp.id}/refunds`, {
      amount_minor: a,
      reason: `bench refund ${i}`,
    });
    if (res.status === 201) httpAccepted.push({ id: res.body.data.id, amount: a });
    else if (res.status === 422) httpRefused.push(a);
    return String(res.status);
  });
  const httpH = await headroom(
    viaHttp.id,
    httpAccepted.map((x) => x.amount),
    httpRefused,
  );
  progress(`operator API: ${httpRun.perSecond}/s ${JSON.stringify(httpRun.statuses)}, ${httpH.refundable} left`);

  // 3. The service in this process.
  const viaService = await paidPayment('service');
  const svcAccepted: { id: string; amount: number }[] = [];
  const svcRefused: number[] = [];
  noteLoad('service');
  const svcRun = await load(clients, refunds, 600, async (i) => {
    const a = amountOf(i);
    try {
      const r = await requestRefund(orm.em.fork(), {
        accountId,
        payment: viaService.id,
        amountMinor: a,
        reason: `bench refund ${i}`,
        source: 'bench',
      });
      svcAccepted.push({ id: r.id, amount: a });
      return 'created';
    } catch (err) {
      if (err instanceof DomainError && err.kind === 'invalid') {
        svcRefused.push(a);
        return '422';
      }
      throw err;
    }
  });
  const svcH = await headroom(
    viaService.id,
    svcAccepted.map((x) => x.amount),
    svcRefused,
  );
  progress(`service: ${svcRun.perSecond}/s ${JSON.stringify(svcRun.statuses)}, ${svcH.refundable} left`);
  out.floorAfter = await floorRun('bare guarded UPDATE, again');

  // Settle every accepted refund that is still open: each writes its legs and moves its parent (on
  // the parent's lock). A refund in draft (one a refund workflow is to send) goes through pending.
  // One already moved by something else is left as it is; what must hold below holds either way.
  const toSettle = [...httpAccepted, ...svcAccepted];
  noteLoad('settle');
  const settleRun = await load(clients, toSettle.length, 600, async (i) => {
    const id = toSettle[i].id;
    const state = (await pool.query('select state from payments where id = $1', [id])).rows[0].state as string;
    if (!['draft', 'pending', 'authorised'].includes(state)) return `already ${state}`;
    if (state === 'draft') await recordMove(orm.em.fork(), { accountId, payment: id, to: 'pending', source: 'bench' });
    const m = await recordMove(orm.em.fork(), { accountId, payment: id, to: 'paid', source: 'bench' });
    return m.applied ? 'settled' : 'refused';
  });
  progress(`settled ${toSettle.length} refunds: ${settleRun.perSecond}/s ${JSON.stringify(settleRun.statuses)}`);
  noteLoad('end');

  // What must hold, per refunded payment: right after its refunds (the headroom) and now.
  const check = async (
    label: string,
    parentId: string,
    run: LoadResult,
    h: Awaited<ReturnType<typeof headroom>>,
    acceptedIds: string[],
  ) => {
    const rows = (
      await pool.query(
        `select count(*)::int as n,
                coalesce(sum(amount_minor) filter (where state in ('draft', 'pending', 'authorised', 'paid')), 0)::bigint as holding,
                coalesce(sum(amount_minor) filter (where state = 'paid'), 0)::bigint as settled,
                count(*) filter (where state = 'paid')::int as paid
           from payments where refund_of = $1 and is_refund`,
        [parentId],
      )
    ).rows[0];
    const parent = (
      await pool.query('select state, amount_minor::bigint as a, refunded_minor::bigint as r from payments where id = $1', [parentId])
    ).rows[0];
    const [amount, refunded, holding, settled] = [Number(parent.a), Number(parent.r), Number(rows.holding), Number(rows.settled)];
    const statuses = Object.keys(run.statuses).filter((s) => s !== '201' && s !== '422' && s !== 'created');
    must(
      run.errors === 0 && statuses.length === 0,
      `${label}: answers other than 201/422: ${JSON.stringify(run.statuses)}, ${run.errors} errors`,
    );
    must(h.accepted + h.refused === refunds, `${label}: ${h.accepted} + ${h.refused} answers for ${refunds} refunds`);
    must(h.overRefunded === 0 && refunded <= amount, `${label}: over-refunded (${h.refunded}, then ${refunded}, of ${amount})`);
    must(rows.n === acceptedIds.length, `${label}: ${rows.n} refund rows for ${acceptedIds.length} accepted`);
    // With no refund given back meanwhile, the headroom is exactly what was accepted, and nothing was
    // refused while it would still have fitted.
    if (h.released === 0) {
      must(h.refunded === h.acceptedSum, `${label}: refunded ${h.refunded}, accepted ${h.acceptedSum}`);
      must(h.minRefused === null || h.refundable < h.minRefused, `${label}: ${h.refundable} left but ${h.minRefused} refused`);
    }
    must(refunded === holding, `${label}: refunded_minor ${refunded}, the refunds holding headroom ${holding}`);
    must(h.refunded + h.refundable === h.amount, `${label}: refunded + refundable ≠ amount`);
    const expected = settled >= amount ? 'refunded' : settled > 0 ? 'partly_refunded' : 'paid';
    must(parent.state === expected, `${label}: parent ${parent.state}, its settled refunds ${settled} of ${amount}`);
    return {
      ...figures(run),
      ...h,
      refundRows: rows.n,
      refundsSettled: rows.paid,
      settledMinor: settled,
      refundedMinorNow: refunded,
      parentState: parent.state,
    };
  };
  out.operatorApi = await check(
    'operator API',
    viaHttp.id,
    httpRun,
    httpH,
    httpAccepted.map((x) => x.id),
  );
  out.service = await check(
    'service',
    viaService.id,
    svcRun,
    svcH,
    svcAccepted.map((x) => x.id),
  );
  out.settle = figures(settleRun);

  // The ledger: every payment's legs balance, entry_no has no gap, and over the account each ledger
  // account nets to what was collected less what went back.
  const unbalanced = (
    await pool.query(
      `select payment_id, sum(case when direction = 'debit' then amount_minor else -amount_minor end) as net,
              count(*) as n, max(entry_no) as last
         from ledger_entries where account_id = $1 group by payment_id
        having sum(case when direction = 'debit' then amount_minor else -amount_minor end) <> 0 or count(*) <> max(entry_no)`,
      [accountId],
    )
  ).rows;
  const byAccount = Object.fromEntries(
    (
      await pool.query(
        `select account, sum(case when direction = 'debit' then amount_minor else -amount_minor end)::bigint as net
           from ledger_entries where account_id = $1 group by account`,
        [accountId],
      )
    ).rows.map((r) => [r.account, Number(r.net)]),
  );
  const legs = (
    await pool.query('select count(*)::int as n, count(distinct payment_id)::int as payments from ledger_entries where account_id = $1', [
      accountId,
    ])
  ).rows[0];
  // A charge of AMOUNT per payment made paid (the floors' and the two refunded ones); the settled refunds back.
  const collected = charged * AMOUNT - (out.operatorApi as any).settledMinor - (out.service as any).settledMinor;
  must(
    unbalanced.length === 0,
    `ledger: ${unbalanced.length} payments unbalanced or with a gap: ${JSON.stringify(unbalanced.slice(0, 3))}`,
  );
  must(
    byAccount.provider_clearing === collected && byAccount.customer_payments === -collected,
    `ledger by account ${JSON.stringify(byAccount)}, expected ±${collected}`,
  );
  out.ledger = {
    legs: legs.n,
    payments: legs.payments,
    unbalancedPayments: unbalanced.length,
    netByAccount: byAccount,
    expectedNet: collected,
  };

  // Against the mean of the two floors (the machine is shared; each is printed above).
  const floorRate = ((out.floorBefore as any).perSecond + (out.floorAfter as any).perSecond) / 2;
  out.ratios = {
    operatorApiOfFloor: Math.round((httpRun.perSecond / floorRate) * 1000) / 1000,
    serviceOfFloor: Math.round((svcRun.perSecond / floorRate) * 1000) / 1000,
  };
  out.holds = problems.length === 0 ? 'all' : problems;
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  await orm.close();
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
if (problems.length) process.exitCode = 1;
