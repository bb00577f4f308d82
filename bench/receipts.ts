// SMS delivery receipts posted to the API the way the gateway posts them (signed, form-encoded, one
// request each, 64 connections), against the API process's own CPU, beside the database's floor for
// the same status moves (one set-based update) in the same run.
//   npx tsx bench/receipts.ts [-- --receipts 50000 --connections 64]
import fs from 'node:fs';
import pg from 'pg';
import { Agent } from 'undici';
import { benchStack, numberArg } from './lib.js';
import { signTwilio } from '../providers/sms-gateway/signature.js';
import { loadConfig } from '../config.js';

const total = numberArg('receipts', 50_000);
const connections = numberArg('connections', 64);
const { stack, dir, accountId } = await benchStack();
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 2 });
const apiPid = stack.children.get('api')!.pid!;
const cpuSeconds = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const out: Record<string, unknown> = { receipts: total, connections };
try {
  // Sent messages waiting for their receipt (set-up, not measured); a second set for the floor.
  const insert = (prefix: string) =>
    pool.query(
      `insert into messages (uid, account_id, direction, channel_type, recipient, body, status, dispatch_mode, gateway_message_id, sent_at, created_at, updated_at)
    select '${prefix}' || g, $1, 'outbound', 'sms', '+2557' || lpad(g::text, 8, '0'), 'Hello', 'sent', 'batch', 'SM${prefix}' || g, now(), now(), now() from generate_series(1, $2) g`,
      [accountId, total],
    );
  await insert('rcpt_');
  await insert('floor_');
  let t0 = performance.now();
  await pool.query(`update messages set status = 'delivered', delivered_at = now(), updated_at = now() where uid like 'floor_%'`);
  out.databaseFloorSeconds = Math.round(performance.now() - t0) / 1000;

  const config = loadConfig();
  const url = new URL(stack.apiUrl);
  const agent = new Agent({ keepAliveTimeout: 4_000 });
  let next = 1;
  let failed = 0;
  const cpu0 = cpuSeconds(apiPid);
  t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next <= total) {
        const i = next++;
        const path = `/providers/sms/status?m=rcpt_${i}`;
        const params = {
          MessageSid: `SMrcpt_${i}`,
          SmsSid: `SMrcpt_${i}`,
          MessageStatus: 'delivered',
          SmsStatus: 'delivered',
          AccountSid: 'ACbench',
          From: '+15005550006',
          To: '+255700000000',
          ApiVersion: '2010-04-01',
        };
        const res = await agent.request({
          origin: url.origin,
          path,
          method: 'POST',
          body: new URLSearchParams(params).toString(),
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-twilio-signature': signTwilio(config.smsGatewayAuthToken, `${stack.apiUrl}${path}`, params),
          },
        });
        await res.body.dump();
        if (res.statusCode !== 204) failed++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const apiCpu = cpuSeconds(apiPid) - cpu0;
  const delivered = (await pool.query(`select count(*)::int as n from messages where uid like 'rcpt_%' and status = 'delivered'`)).rows[0]
    .n;
  out.api = {
    seconds: Math.round(seconds * 10) / 10,
    perSecond: Math.round(total / seconds),
    failed,
    delivered,
    cpuSeconds: Math.round(apiCpu * 10) / 10,
    cpuMicrosecondsPerReceipt: Math.round((apiCpu / total) * 1e6),
  };
  await agent.close();
} finally {
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
