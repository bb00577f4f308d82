import fs from 'node:fs';
import { spawn, execFileSync } from 'node:child_process';

// `npm start` as a user runs it (scripts/dev.ts), on private ports and a private data directory.
export async function start(dataDir: string, ports: Record<string, number>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/dev.ts'], {
    env: {
      ...process.env,
      SVC_DATA_DIR: dataDir,
      PORT: String(ports.api),
      TEMPORAL_PORT: String(ports.temporal),
      TEMPORAL_UI_PORT: String(ports.ui),
      SIM_PORT: String(ports.sim),
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      TEMPORAL_ADDRESS: '',
      SMS_GATEWAY_URL: '',
      WHATSAPP_API_URL: '',
      PAYMENT_PROVIDER_URL: '',
      PUBLIC_BASE_URL: '',
      SIM_SMS_INBOUND_URL: '',
      SIM_WA_WEBHOOK_URL: '',
      // The test stack's own secrets are in this environment: the launcher must make its own.
      OPERATOR_TOKEN: '',
      SMS_GATEWAY_AUTH_TOKEN: '',
      WHATSAPP_ACCESS_TOKEN: '',
      WHATSAPP_APP_SECRET: '',
      WHATSAPP_VERIFY_TOKEN: '',
      DATA_CURSOR_SECRET: '',
      OAUTH_SECRET: '',
      PAYMENT_CONSUMER_SECRET: '',
      PAYMENT_PASSKEY: '',
      PAYMENT_SECURITY_CREDENTIAL: '',
      PAYMENT_CALLBACK_SECRET: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b) => {
    out += b;
  });
  child.stderr.on('data', (b) => {
    out += b;
  });
  const deadline = Date.now() + 120_000;
  while (!/Dev API key\s+(\S+)/.test(out)) {
    if (child.exitCode !== null) throw new Error(`launcher exited: ${out}`);
    if (Date.now() > deadline) throw new Error(`launcher did not come up: ${out}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, out: () => out, key: /Dev API key\s+(\S+)/.exec(out)![1], operator: /Operator token\s+(\S+)/.exec(out)![1] };
}

export const descendants = (pid: number): number[] => {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/).map(Number));
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of rows)
      if (pp === p) {
        out.push(c);
        walk(c);
      }
  };
  walk(pid);
  return out;
};
// A zombie has exited; it only waits for a parent to collect it (PID 1 in a container may never do so).
export const alive = (pid: number) => {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

export async function stop(child: ReturnType<typeof spawn>) {
  const family = descendants(child.pid!);
  child.kill('SIGINT');
  await new Promise((r) => child.once('exit', r));
  const deadline = Date.now() + 15_000;
  while (family.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  return family;
}
