// Immediate SMS sends against a local stack, beside the engine's own ceiling in the same run.
//   npm run bench:send [-- --seconds 20 --clients 50 --burst 10000]
// Prints JSON figures; docs/benchmarks.md records them with this command.
import fs from 'node:fs';
import { Connection, Client } from '@temporalio/client';
import pg from 'pg';
import { benchStack, load } from './lib.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const seconds = arg('seconds', 20);
const clients = arg('clients', 50);
const burst = arg('burst', 10_000);

const { stack, dir, token, accountId } = await benchStack();
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const out: Record<string, unknown> = { machine: `${(await import('node:os')).cpus().length} cores`, clients };
try {
  // 1. The engine's ceiling: bare workflow starts (no worker polls this queue, so nothing else runs).
  out.bareWorkflowStart = await load(clients, 1e9, seconds / 2, async (i) => {
    await temporal.workflow.start('messageWorkflow', { taskQueue: 'bench-no-worker', workflowId: `bench-bare-${i}`, args: [] });
    return 'started';
  });

  // 1b. The database's own floor for the same work: one message row inserted per call, 50 at a time.
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: clients });
  let k = 0;
  out.bareInsert = await load(clients, 1e9, seconds / 2, async () => {
    await pool.query(`insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, created_at, updated_at)
                      values ($1, $2, 'outbound', 'sms', '+255700000001', 'floor', 'failed', 'bench', now(), now())`, [`bench_${k++}`, accountId]);
    return 'inserted';
  });
  await pool.end();

  // 2. Sustained immediate sends through the API (auth, rate limit, insert, update-with-start).
  let n = 0;
  const send = async () => {
    const res = await fetch(`${stack.apiUrl}/api/v3/sms/send`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ recipient: `+2557${String(10_000_000 + n++).slice(-8)}1`, message: 'Benchmark message' }),
    });
    if (res.status !== 201) throw new Error(String(res.status));
    return ((await res.json()) as any).data.messages[0].status as string;
  };
  out.sustainedSend = await load(clients, 1e9, seconds, send);

  // 3. A burst of `burst` sends from `clients` clients: nothing may error or be lost.
  const before = (await (await fetch(`${stack.simulatorUrl}/_sim/sms/messages`)).json() as any).count;
  out.burst = await load(clients, burst, 600, send);
  const drainStart = performance.now();
  let delivered = 0;
  for (;;) {
    const count = (await (await fetch(`${stack.simulatorUrl}/_sim/sms/messages`)).json() as any).count;
    delivered = count - before;
    if (delivered >= burst || performance.now() - drainStart > 600_000) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  out.burstDrain = { providerReceived: delivered, expected: burst, drainSeconds: Math.round((performance.now() - drainStart) / 100) / 10 };
} finally {
  await connection.close();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
