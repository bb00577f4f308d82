import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { openOrm } from '../../entities/orm.js';
import { many, one } from '../../entities/db.js';
import { http, newTenant, eventually, sim, uniquePhone, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';
import { startReceiver } from '../support/receiver.js';
import { createEndpoint } from '../support/webhooks.js';

// The production shape on one machine: two APIs and two workers of one deployment (one task queue)
// against the run's PostgreSQL and Temporal server. DISPATCH_RUNS=6 against the suite's 4 gives the
// two workers dispatcher runs of their own (runs 4 and 5), so killing one of them kills a dispatch
// in flight; the suite's worker keeps runs 0-3, and every run claims from the same queue.
const RATE = 60;
const stack = await privateStack(
  {
    DISPATCH_RUNS: '6',
    CAMPAIGN_PAGE_SIZE: '250',
    CAMPAIGN_PAGES_PER_RUN: '10',
    RATE_LIMIT_PER_MINUTE: String(RATE),
  },
  { apis: 2, workers: 2 },
);
const orm = await openOrm(process.env.DATABASE_URL!, 2);
after(async () => {
  await stack.stop();
  await orm.close();
});
const [apiA, apiB] = stack.apiUrls;

/** What the provider (the simulator) accepted, per recipient among `phones`. */
async function providerCounts(phones: string[]) {
  const seen = (await sim('GET', '/_sim/sms/messages')).body.messages as Array<{ to: string }>;
  const wanted = new Set(phones);
  const counts = new Map<string, number>();
  for (const m of seen) if (wanted.has(m.to)) counts.set(m.to, (counts.get(m.to) ?? 0) + 1);
  return counts;
}

test('the rate limit of a key is one window across both APIs', { timeout: 60_000 }, async () => {
  const t = await newTenant();
  const statuses: number[] = [];
  const remaining: number[] = [];
  for (let i = 0; i < RATE; i++) {
    const r = await http('GET', `${i % 2 ? apiB : apiA}/api/v3/balance`, { token: t.token });
    statuses.push(r.status);
    remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
  }
  assert.deepEqual([...new Set(statuses)], [200], 'the first RATE requests, half on each API, pass');
  assert.deepEqual(
    remaining,
    remaining.map((_, i) => RATE - 1 - i),
    'each API counts the requests the other one served',
  );
  for (const base of [apiA, apiB]) {
    const r = await http('GET', `${base}/api/v3/balance`, { token: t.token });
    assert.equal(r.status, 429, `${base}: ${r.text}`);
  }
});

test('sends spread over both APIs: each recipient reaches the provider once', { timeout: 120_000 }, async () => {
  const t = await newTenant();
  const phones = Array.from({ length: 40 }, () => uniquePhone());
  const uids: string[] = [];
  for (const [i, recipient] of phones.entries()) {
    const r = await http('POST', `${i % 2 ? apiB : apiA}/api/v3/sms/send`, { token: t.token, body: { recipient, message: `spread ${i}` } });
    assert.equal(r.status, 201, r.text);
    uids.push(r.body.data.messages[0].uid);
  }
  await eventually(
    async () => many<{ status: string }>(orm.em.fork(), `select status from messages where uid = any(?::text[])`, [`{${uids.join(',')}}`]),
    (rows) => rows.length === uids.length && rows.every((r) => ['sent', 'delivered'].includes(r.status)),
    90_000,
    500,
  );
  const counts = await providerCounts(phones);
  assert.equal(counts.size, phones.length, 'every recipient reached the provider');
  assert.deepEqual([...new Set(counts.values())], [1], 'none twice');
});

async function audience(t: Tenant, total: number) {
  const g = await http('POST', `${apiA}/api/v3/contact-groups`, { token: t.token, body: { name: 'Crowd' } });
  assert.equal(g.status, 201, g.text);
  const phones = Array.from({ length: total }, () => uniquePhone());
  // Set-up, not under test: the contacts written straight into the table (imports have their own tests).
  await orm.em.fork().execute(
    `insert into contacts (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
     select 'ctc_mp_' || g.id || '_' || p.ord, ?, g.id, 'N' || p.ord, '255', substr(p.phone, 5), substr(p.phone, 2), true, '{}', now(), now()
       from contact_groups g, unnest(?::text[]) with ordinality as p(phone, ord) where g.id = ?`,
    [t.accountId, `{${phones.join(',')}}`, g.body.data.id],
  );
  return { groupId: g.body.data.id as number, phones };
}

test(
  'a 10,000-recipient campaign over two APIs and two workers, one of each killed mid-campaign: every recipient sent exactly once',
  { timeout: 600_000 },
  async () => {
    const t = await newTenant();
    const total = 10_000;
    // The account's endpoint hears every message.sent: one callback per recipient, first attempts
    // from the webhook dispatchers of every worker (a killed one's leased claims come back later).
    const receiver = await startReceiver([200]);
    await createEndpoint(t.accountId, receiver.url, ['message.sent']);
    const { groupId, phones } = await audience(t, total);
    const created = await http('POST', `${apiA}/api/v3/sms/campaign`, {
      token: t.legacyToken,
      body: { contact_list_id: String(groupId), message: 'Hello {{name}}' },
    });
    assert.equal(created.status, 201, created.text);
    const uid = created.body.data.campaigns[0].uid as string;
    // Polled at most every 2.5 s: the key's window (RATE a minute) is shared by both APIs.
    const view = (base: string) => http('GET', `${base}/api/v3/campaign/${uid}/view`, { token: t.legacyToken });
    const midway = await eventually(
      () => view(apiB),
      (r) => r.body.data?.sent_count >= 1000,
      240_000,
      2500,
    );
    await Promise.all([stack.killApi(0), stack.killWorker(0)]);
    const atKill = (await view(apiB)).body.data;
    assert.ok(atKill.sent_count < total, `killed mid-campaign (${atKill.sent_count} sent, ${midway.body.data.total_recipients} written)`);

    const done = await eventually(
      () => view(apiB),
      (r) => r.body.data?.status === 'completed' && r.body.data.sent_count + r.body.data.failed_count >= total,
      420_000,
      2500,
    );
    assert.deepEqual([done.body.data.total_recipients, done.body.data.sent_count, done.body.data.failed_count], [total, total, 0]);
    const rows = await many<{ recipient: string; n: string }>(
      orm.em.fork(),
      `select recipient, count(*) as n from messages where account_id = ? group by recipient`,
      [t.accountId],
    );
    assert.equal(rows.length, total, 'one record per recipient');
    assert.deepEqual([...new Set(rows.map((r) => Number(r.n)))], [1]);
    const unsent = await one<{ n: string }>(
      orm.em.fork(),
      `select count(*) as n from messages where account_id = ? and gateway_message_id is null`,
      [t.accountId],
    );
    assert.equal(Number(unsent!.n), 0);
    const counts = await providerCounts(phones);
    assert.equal(counts.size, total, 'every recipient reached the provider');
    assert.deepEqual([...new Set(counts.values())], [1], 'no recipient sent twice');

    // Webhooks: one message.sent event per recipient, each delivered under its own stable id. A
    // claim the killed worker held is posted again after its lease (at least once, same webhook-id).
    try {
      const ids = (r: typeof receiver.got) => new Set(r.map((g) => g.headers['webhook-id'] as string));
      await eventually(
        async () => ids(receiver.got).size,
        (n) => n >= total,
        240_000,
        2000,
      );
      const events = await one<{ n: string }>(
        orm.em.fork(),
        `select count(*) as n from events where account_id = ? and kind = 'message.sent'`,
        [t.accountId],
      );
      assert.equal(Number(events!.n), total, 'one message.sent event per recipient');
      const byMessage = new Map<string, Set<string>>();
      for (const g of receiver.got) {
        const key = String(g.json?.message_id ?? g.json?.data?.message_id);
        byMessage.set(key, (byMessage.get(key) ?? new Set()).add(g.headers['webhook-id'] as string));
      }
      assert.equal(byMessage.size, total, 'every message heard once');
      assert.deepEqual([...new Set([...byMessage.values()].map((v) => v.size))], [1], 'a repeated callback carries the same webhook-id');
    } finally {
      await receiver.close();
    }
  },
);
