import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { one } from '../../entities/db.js';
import { createLogger } from '../../logger.js';
import { providerTaskQueue } from '../../config.js';
import { providerBudgetBucket, providerBudgets } from '../../activities/messaging/dispatch.js';
import { http, newTenant, eventually, uniquePhone } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

// One provider budget per channel and deployment, drawn on by both send paths (docs/architecture.md,
// Several processes): per-message sends count their calls, the batch dispatch takes what each second
// of the database clock has left.
const orm = await openOrm(process.env.DATABASE_URL!, 4);
after(() => orm.close());
const log = createLogger('test', 'warn');

const dbMs = async () =>
  Number((await one<{ ms: string }>(orm.em.fork(), 'select floor(extract(epoch from clock_timestamp()) * 1000)::bigint::text as ms'))!.ms);
/** Waits for a second of the database clock to begin; answers that second. */
const freshSecond = async () => {
  const ms = await dbMs();
  await new Promise((r) => setTimeout(r, 1000 - (ms % 1000) + 20));
  return Math.floor((await dbMs()) / 1000);
};

test('the batch dispatch yields to per-message sends: a second they used up gives it nothing', { timeout: 30_000 }, async () => {
  const bucket = providerBudgetBucket(`budget-test-${process.pid}`);
  const budgets = providerBudgets(orm, log, {
    sms: { bucket, perSecond: 10 },
    whatsapp: { bucket: `${bucket}-whatsapp`, perSecond: 10 },
  });
  // Nothing counted in the second: the batch's call goes at once.
  let second = await freshSecond();
  await budgets.pace.sms();
  assert.equal(Math.floor((await dbMs()) / 1000), second, 'a free second grants at once');

  // The per-message sends made the whole rate in this second: the batch's next call waits for the next one.
  second = await freshSecond();
  await Promise.all(Array.from({ length: 10 }, () => budgets.count.sms()));
  await budgets.pace.sms();
  assert.ok(Math.floor((await dbMs()) / 1000) > second, 'a used-up second grants nothing');
  const counted = await one<{ count: number }>(
    orm.em.fork(),
    'select count from rate_limit_windows where bucket = ? and window_start = ?',
    [bucket, second * 1000],
  );
  // The ten calls, and the batch's refused ask for one more, which only marks the second full.
  assert.equal(Number(counted?.count), 11);
});

test("per-message sends count their calls in their deployment's budget", { timeout: 120_000 }, async () => {
  // 2,000 a second: the batch dispatch takes grants of 100. This worker's dispatcher also serves the
  // run's shared queue, so whatever it took meanwhile is a multiple of 100 in the same bucket.
  const stack = await privateStack({ SMS_MAX_PER_SECOND: '2000' });
  try {
    const t = await newTenant();
    const recipients = Array.from({ length: 3 }, () => uniquePhone('2555'));
    // Scheduled: each runs its own workflow on this deployment's provider queue.
    const r = await http('POST', `${stack.apiUrl}/api/v3/sms/send`, {
      token: t.token,
      body: { recipients, message: 'counted', schedule_time: new Date(Date.now() + 1500).toISOString() },
    });
    assert.equal(r.status, 201);
    await eventually(
      () => http('GET', `${stack.apiUrl}/api/v3/messages?per_page=10`, { token: t.token }),
      (x) => x.body.data?.messages.length === 3 && x.body.data.messages.every((m: any) => ['sent', 'delivered'].includes(m.status)),
      60_000,
      500,
    );
    const bucket = providerBudgetBucket(providerTaskQueue({ taskQueue: stack.taskQueue }, 'sms'));
    const sum = async () =>
      Number(
        (await one<{ n: string }>(orm.em.fork(), 'select coalesce(sum(count), 0)::text as n from rate_limit_windows where bucket = ?', [
          bucket,
        ]))!.n,
      );
    const counted = await eventually(sum, (n) => n % 100 === 3, 10_000, 200);
    assert.equal(counted % 100, 3);
  } finally {
    await stack.stop();
  }
});
