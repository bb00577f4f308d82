// Records the occasion workflow's histories for the replay test:
//   npx tsx scripts/record-occasions.ts
// A stack of its own; cards set through the API, runs started by the card's Temporal Schedule
// (triggered, as on its day) or, where the schedule cannot be the starter (a card switched off has
// none), started as the schedule's action would be: a birthday greeted (sent), the same day run
// again (already_sent), a holiday whose day is not today (not_the_day), a card switched off
// (switched_off, started directly: no TemporalScheduledStartTime), and a run refused by the
// campaigns family (its sender id removed after it was set: gave_up).
// test/replay/histories/occasionWorkflow/<scenario>.json. Re-record after a change to
// workflows/occasions/occasion.ts.
import { ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { loadConfig } from '../config.js';
import { occasionWorkflowId } from '../workflows/occasions/occasion.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'occasionWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A zone where it is now between 03:00 and 20:59, and today's MM-DD there. */
function safeZone(): { zone: string; monthDay: string } {
  for (const zone of ['UTC', 'Asia/Tokyo', 'America/New_York', 'Asia/Kolkata', 'Pacific/Auckland']) {
    const f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' });
    const p = Object.fromEntries(f.formatToParts(new Date()).map((x) => [x.type, x.value]));
    if (Number(p.hour) >= 3 && Number(p.hour) <= 20) return { zone, monthDay: `${p.month}-${p.day}` };
  }
  throw new Error('no zone between 03:00 and 21:00');
}

/** The run of the schedule that started after `since` runs had, once it closed. */
async function nextRun(client: Client, accountId: number, key: string, since: number) {
  for (let i = 0; i < 200; i++) {
    const runs = [];
    for await (const w of client.workflow.list({
      query: `WorkflowType = '${TYPE}' AND AccountId = '${accountId}' AND ResourceId = '${key}'`,
    }))
      runs.push(w);
    if (runs.length > since) {
      const newest = runs.sort((a, b) => b.startTime.getTime() - a.startTime.getTime())[0];
      return client.workflow.getHandle(newest.workflowId, newest.runId);
    }
    await sleep(250);
  }
  throw new Error(`no run of ${key}`);
}

await withRecorder('svc-record-occasions', {}, 'Occasions recorder', async ({ client, account, admin, api, save }) => {
  const { zone, monthDay } = safeZone();
  const ok = (r: any, what: string) => {
    if (r.status !== 'success') throw new Error(`${what}: ${JSON.stringify(r)}`);
    return r.data;
  };
  ok(await api('PATCH', '/api/v3/occasions/defaults', { time_zone: zone, country: 'TZ' }), 'defaults');
  const group = ok(await api('POST', '/api/v3/contact-groups', { name: 'Customers' }), 'group');
  ok(
    await api('POST', `/api/v3/contacts/${group.id}/store`, { PHONE: '+255700100200', name: 'Ann', birthday: `1990-${monthDay}` }),
    'contact',
  );

  const trigger = async (key: string, scenario: string, since: number) => {
    await client.schedule.getHandle(occasionWorkflowId(account.id, key)).trigger(ScheduleOverlapPolicy.ALLOW_ALL);
    await save(TYPE, scenario, await nextRun(client, account.id, key, since));
  };

  ok(await api('PATCH', '/api/v3/occasions/birthday', { enabled: true }), 'birthday on');
  await trigger('birthday', 'sent', 0);
  await sleep(1100);
  await trigger('birthday', 'already-sent', 1);

  // Christmas switched on, run on a day that is not Christmas (or, on 25 December, Boxing Day's).
  const holiday = monthDay === '12-25' ? 'boxing-day' : 'christmas-day';
  ok(await api('PATCH', `/api/v3/occasions/${holiday}`, { enabled: true }), 'holiday on');
  await trigger(holiday, 'not-the-day', 0);

  const off = await client.workflow.start(TYPE, {
    taskQueue: loadConfig().taskQueue,
    workflowId: `${occasionWorkflowId(account.id, 'union-day')}-recorded`,
    args: [{ accountId: account.id, key: 'union-day' }],
  });
  await save(TYPE, 'switched-off', off);

  const sender = ok(await admin('POST', `/accounts/${account.id}/sender-ids`, { value: 'DUKA', approval_status: 'approved' }), 'sender');
  ok(
    await api('PUT', '/api/v3/occasions/gift-day', { kind: 'holiday', name: 'Gift day', date: monthDay, sender_id: 'DUKA', enabled: true }),
    'gift day',
  );
  ok(await admin('DELETE', `/accounts/${account.id}/sender-ids/${sender.id}`), 'sender removed');
  await trigger('gift-day', 'gave-up', 0);
});
