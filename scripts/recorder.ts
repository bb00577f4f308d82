// What every history recorder (scripts/record-*.ts) needs: a private stack with the recorder's
// settings, a Temporal client, an account with a full-permission issuer and its key, JSON calls to
// the operator API, the customer API and the simulator, and one way to save a finished workflow's
// history under test/replay/histories/<workflowType>/<scenario>.json.
import fs from 'node:fs';
import path from 'node:path';
import { Connection, Client, type WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { privateRunStack, projectRoot } from './stack.js';

const OPERATOR_TOKEN = 'record-operator-token';

type Call = (method: string, p: string, payload?: unknown) => Promise<any>;

export interface Recorder {
  stack: Awaited<ReturnType<typeof privateRunStack>>['stack'];
  client: Client;
  account: { id: number; uid: string };
  admin: Call;
  api: Call;
  sim: Call;
  /** Waits for the workflow to close (a failed run is a scenario too), then writes its history. */
  save(workflowType: string, scenario: string, handle: WorkflowHandle): Promise<void>;
}

async function call(method: string, url: string, token: string, payload?: unknown) {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: payload === undefined ? undefined : JSON.stringify(payload),
  });
  return res.json() as Promise<any>;
}

/** Runs `record` against a stack of its own (`env` on top of the recorder's defaults), then stops it. */
export async function withRecorder(
  prefix: string,
  env: Record<string, string>,
  accountName: string,
  record: (r: Recorder) => Promise<void>,
): Promise<void> {
  const { stack, dataDir } = await privateRunStack(prefix, { OPERATOR_TOKEN, LOG_LEVEL: 'warn', ...env });
  const connection = await Connection.connect({ address: stack.temporalAddress });
  try {
    const client = new Client({ connection });
    const admin: Call = (method, p, payload) => call(method, `${stack.apiUrl}/admin/v1${p}`, OPERATOR_TOKEN, payload);
    const account = (await admin('POST', '/accounts', { name: accountName, wallet_balance: 100, currency: 'USD' })).data;
    const email = `${prefix}@example.com`;
    const user = (await admin('POST', `/accounts/${account.id}/users`, { email, name: 'Recorder', permissions: ['*'] })).data;
    const key = (await admin('POST', `/accounts/${account.id}/keys`, { name: 'recorder', user_id: user.id })).data.token;
    await record({
      stack,
      client,
      account,
      admin,
      api: (method, p, payload) => call(method, `${stack.apiUrl}${p}`, key, payload),
      sim: (method, p, payload) => call(method, `${stack.simulatorUrl}${p}`, '', payload),
      async save(workflowType, scenario, handle) {
        await handle.result().catch(() => undefined);
        const file = path.join(projectRoot, 'test/replay/histories', workflowType, `${scenario}.json`);
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, historyToJSON(await handle.fetchHistory()));
        process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
      },
    });
  } finally {
    await connection.close();
    await stack.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
