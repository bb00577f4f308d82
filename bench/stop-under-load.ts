// Ctrl-C of `npm start` while it works (issue 16, point 6): the launcher on private ports and data,
// sends arriving from 16 clients (single recipients, answered after their first outcome or queued
// under load) and, a second before the stop, batch sends of 1,000 recipients each, then SIGINT to
// the launcher while the batch dispatcher works through them. Measured: the time until the last
// process of the stack has exited. Then the stack is started again on the same data, and every send
// answered 201 must reach the provider (sent, then delivered or failed): nothing accepted is lost.
//   npx tsx bench/stop-under-load.ts [-- --load-seconds 8 --batches 4 --timeout 180]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../scripts/embedded-pg.js';
import { alive, descendants, start } from '../test/support/launcher.js';
import { numberArg } from './lib.js';

const loadSeconds = numberArg('load-seconds', 8);
const batches = numberArg('batches', 4);
const timeoutS = numberArg('timeout', 180);
const progress = (msg: string) => process.stderr.write(`${msg}\n`);

// The launcher reads its environment: the per-key rate limit lifted, as the other benches do.
process.env.RATE_LIMIT_PER_MINUTE = '100000000';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-stop-'));
const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort(), sim: await freePort() };
const base = `http://127.0.0.1:${ports.api}`;
const out: Record<string, unknown> = { loadSeconds, batches };
let running: Awaited<ReturnType<typeof start>> | null = null;

const call = async (token: string, method: string, p: string, body?: unknown) => {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json().catch(() => null)) as any };
};
const phone = (n: number) => `+2557${String(10_000_000 + n).slice(-8)}`;

try {
  running = await start(dataDir, ports);
  const { key, operator } = running;
  const me = await call(key, 'GET', '/api/v3/me');
  // The dev account starts with 100 USD; enough for every send here.
  await call(operator, 'PATCH', `/admin/v1/accounts/${me.body.data.id}`, { wallet_balance: 1_000_000 });

  const accepted = new Set<string>();
  let refused = 0;
  let cut = 0;
  let stopping = false;
  let stopped = false;
  let n = 0;
  const sendLoop = async () => {
    while (!stopping) {
      const i = n++;
      try {
        const r = await call(key, 'POST', '/api/v3/sms/send', { recipient: phone(i), message: `stop test ${i}` });
        if (r.status === 201) for (const m of r.body.data.messages) accepted.add(m.uid);
        else refused++;
      } catch {
        // The connection closed under the request, or the API is gone: never answered, so never promised.
        if (!stopped) cut++;
        else await new Promise((r) => setTimeout(r, 50));
      }
    }
  };
  const batchSends = Array.from({ length: batches }, async (_, b) => {
    // Posted together a second before the stop, so the stop finds the batch dispatcher mid-way.
    await new Promise((r) => setTimeout(r, Math.max(0, loadSeconds - 1) * 1000));
    const recipients = Array.from({ length: 1000 }, (_, i) => phone(5_000_000 + b * 1000 + i));
    try {
      const r = await call(key, 'POST', '/api/v3/sms/send', { recipients, message: `stop batch ${b}` });
      if (r.status === 201) for (const m of r.body.data.messages) accepted.add(m.uid);
      else refused++;
    } catch {
      cut++;
    }
  });
  const loops = Array.from({ length: 16 }, sendLoop);
  await new Promise((r) => setTimeout(r, loadSeconds * 1000));

  // Ctrl-C: a terminal sends SIGINT to the launcher (its children run in a process group of their own).
  const family = descendants(running.child.pid!);
  const before = accepted.size;
  const t0 = performance.now();
  running.child.kill('SIGINT');
  stopped = true;
  const launcherExited = new Promise<number>((r) => running!.child.once('exit', () => r(performance.now() - t0)));
  let lastExit = 0;
  const deadline = Date.now() + 30_000;
  while (family.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  lastExit = performance.now() - t0;
  const launcherMs = await launcherExited;
  stopping = true;
  await Promise.all([...loops, ...batchSends]);
  running = null;
  out.stop = {
    processes: family.length,
    leftRunning: family.filter(alive).length,
    launcherExitedSeconds: Math.round(launcherMs / 100) / 10,
    lastProcessExitedSeconds: Math.round(lastExit / 100) / 10,
  };
  out.sends = { acceptedBeforeStop: before, acceptedInAll: accepted.size, refused, cutBeforeTheStop: cut };
  progress(`stopped in ${(lastExit / 1000).toFixed(1)} s with ${accepted.size} sends accepted; starting again`);

  // Again on the same data: every accepted send reaches a final status.
  running = await start(dataDir, ports);
  const t1 = performance.now();
  const statuses = new Map<string, string>();
  for (;;) {
    statuses.clear();
    for (let page = 1; ; page++) {
      const r = await call(running.key, 'GET', `/api/v3/messages?per_page=100&page=${page}`);
      if (r.status !== 200) throw new Error(`messages page ${page}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      for (const m of r.body.data.messages) statuses.set(m.uid, m.status);
      if (r.body.data.messages.length < 100) break;
    }
    // Handed to the provider (sent, then its receipt) or final. A receipt the simulator still owed
    // when it was stopped is gone with it (it keeps them in memory); a real provider retries them.
    const open = [...accepted].filter(
      (uid) => !['sent', 'checking_delivery', 'delivered', 'read', 'failed'].includes(statuses.get(uid) ?? ''),
    );
    if (!open.length || (performance.now() - t1) / 1000 > timeoutS) {
      const byStatus: Record<string, number> = {};
      for (const uid of accepted) byStatus[statuses.get(uid) ?? 'missing'] = (byStatus[statuses.get(uid) ?? 'missing'] ?? 0) + 1;
      out.afterRestart = { secondsUntilAllFinal: Math.round((performance.now() - t1) / 100) / 10, byStatus, notFinal: open.length };
      break;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
} finally {
  if (running) {
    const family = descendants(running.child.pid!);
    running.child.kill('SIGINT');
    const deadline = Date.now() + 30_000;
    while (family.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
