// `npm run fuzz`: Schemathesis (PyPI, installed into .venv by this command only, so `npm test` never
// pays for it) against a stack started for this run: every check, a fixed seed, a bounded number of
// examples per operation, on the customer document (account keys, rotated per request by
// scripts/fuzz_hooks.py so the rate limit does not shape the run) and the operator document (operator
// token). Prints one summary line per document; exits non-zero on any failure. Options:
//   FUZZ_SEED (default 20261122), FUZZ_EXAMPLES (per operation, default 25), FUZZ_KEYS (default 30),
//   FUZZ_WORKERS (default 2), FUZZ_INCLUDE (a path regex: only the operations whose path matches, e.g.
//   '/data/'); extra arguments go to `st run` for both documents. The ids of the records it seeds (a
//   data table, its records and columns, a data group) reach schemathesis.toml as FUZZ_* variables.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { privateRunStack, projectRoot } from './stack.js';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const seed = process.env.FUZZ_SEED ?? '20261122';
const examples = process.env.FUZZ_EXAMPLES ?? '25';
const keyCount = Number(process.env.FUZZ_KEYS ?? 30);
const workers = process.env.FUZZ_WORKERS ?? '2';
const include = process.env.FUZZ_INCLUDE ?? '';
const extra = process.argv.slice(2);
const out = (s: string) => process.stdout.write(`${s}\n`);

const st = path.join(projectRoot, '.venv', 'bin', 'st');
if (!fs.existsSync(st) || !spawnSync(st, ['--version'], { encoding: 'utf8' }).stdout.includes(SCHEMATHESIS.split('==')[1])) {
  if (!fs.existsSync(path.join(projectRoot, '.venv', 'bin', 'pip')))
    spawnSync('python3', ['-m', 'venv', '.venv'], { cwd: projectRoot, stdio: 'inherit' });
  const pip = spawnSync(
    path.join(projectRoot, '.venv', 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', SCHEMATHESIS],
    {
      cwd: projectRoot,
      stdio: 'inherit',
    },
  );
  if (pip.status !== 0) throw new Error(`pip install ${SCHEMATHESIS} failed`);
}

const operatorToken = `fuzz-operator-${process.pid}`;
// The failed-authentication throttles would answer 429 to the whole run after the fuzzer's first
// deliberate bad credentials (ignored_auth); they have their own tests (test/integration/auth.test.ts).
const { stack, dataDir } = await privateRunStack('svc-fuzz', {
  OPERATOR_TOKEN: operatorToken,
  LOG_LEVEL: 'warn',
  SIM_RECEIPT_DELAY_MS: '100',
  AUTH_FAILURES_PER_MINUTE: '1000000',
  OPERATOR_FAILURES_PER_MINUTE: '1000000',
});
out(`stack up: api ${stack.apiUrl}, logs in ${dataDir}`);

async function call(method: string, p: string, body?: unknown): Promise<{ data: Record<string, unknown> }> {
  const res = await fetch(`${stack.apiUrl}/admin/v1${p}`, {
    method,
    headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { data: Record<string, unknown> };
}

const tokens: string[] = [];
async function customer(method: string, p: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${stack.apiUrl}${p}`, {
    method,
    headers: { authorization: `Bearer ${tokens[0]}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * One account with a full-permission issuer and many keys (the rate limit is per key), and records
 * for the operations that name one in their path: without them every generated request would stop at
 * the 404 of an unknown id. schemathesis.toml pins the path parameters to these ids (FUZZ_* variables).
 */
async function seedRecords(): Promise<Record<string, string>> {
  const account = (await call('POST', '/accounts', { name: 'Fuzz', wallet_balance: 1000, currency: 'USD' })).data;
  const user = (await call('POST', `/accounts/${account.id}/users`, { email: 'fuzz@example.com', name: 'Fuzz', permissions: ['*'] })).data;
  for (let i = 0; i < keyCount; i++)
    tokens.push(String((await call('POST', `/accounts/${account.id}/keys`, { name: `fuzz ${i}`, user_id: user.id })).data.token));
  const options = (...keys: string[]) => keys.map((key) => ({ key, label: key[0].toUpperCase() + key.slice(1) }));
  const tablesPath = `/accounts/${account.id}/data/tables`;
  const companies = (await call('POST', tablesPath, { name: 'Fuzz companies', columns: [{ key: 'name', type: 'text' }] })).data;
  const dataTable = (
    await call('POST', tablesPath, {
      name: 'Fuzz deals',
      title_column: 'title',
      status_fields: [
        {
          column: 'stage',
          label: 'Stage',
          initial: ['new'],
          moves: [
            { from: 'new', to: 'won' },
            { from: '*', to: 'lost' },
          ],
        },
      ],
      columns: [
        { key: 'title', type: 'text', config: { max_length: 200 } },
        { key: 'code', type: 'text', unique: true },
        { key: 'notes', type: 'long_text' },
        { key: 'seats', type: 'number', config: { precision: 0, min: 1, max: 500 } },
        { key: 'amount', type: 'currency', config: { precision: 2 } },
        { key: 'priority', type: 'boolean' },
        { key: 'closes_on', type: 'date' },
        { key: 'met_at', type: 'datetime' },
        { key: 'phone', type: 'phone' },
        { key: 'email', type: 'email' },
        { key: 'stage', type: 'select', config: { options: options('new', 'won', 'lost') } },
        { key: 'tags', type: 'multi_select', config: { options: options('hot', 'cold') } },
        { key: 'company', type: 'relation', config: { table_id: companies.id } },
        { key: 'contract', type: 'file', config: { multiple: true } },
        { key: 'ref', type: 'auto_number' },
      ],
    })
  ).data;
  const dataRecord = (
    await customer('POST', `/api/v3/data/tables/${dataTable.id}/records`, {
      data: { title: 'Deal A-1', code: 'A-1', seats: 3, amount: 120.5, closes_on: '2026-12-31', stage: 'new', tags: ['hot'] },
    })
  ).record as { id: string };
  const dataGroup = (
    await call('POST', `/accounts/${account.id}/data/groups`, {
      name: 'Fuzz sales',
      table_ids: [dataTable.id, companies.id],
      reports: [{ key: 'revenue', name: 'Revenue', table_id: dataTable.id, measure: 'sum', column: 'amount' }],
    })
  ).data;
  return {
    FUZZ_ACCOUNT: String(account.id),
    FUZZ_DATA_TABLE: String(dataTable.id),
    FUZZ_DATA_COLUMN: 'notes',
    FUZZ_DATA_RECORD: dataRecord.id,
    FUZZ_DATA_GROUP: String(dataGroup.id),
  };
}
let seeded: Record<string, string> = {};

interface Figures {
  document: string;
  operations: number;
  requests: number;
  serverErrors: number;
  failures: Record<string, number>;
  exit: number;
}

function run(document: string, schemaPath: string, env: Record<string, string>, auth: string[]): Figures {
  const report = path.join(dataDir, `${document}.har`);
  const args = [
    'run',
    `${stack.apiUrl}${schemaPath}`,
    '--checks',
    'all',
    '--seed',
    seed,
    '--max-examples',
    examples,
    '--workers',
    workers,
    '--request-timeout',
    '30',
    '--report',
    'har',
    '--report-har-path',
    report,
    '--suppress-health-check',
    'all',
    ...auth,
    ...(include ? ['--include-path-regex', include] : []),
    ...extra,
  ];
  out(`\n== ${document}: st ${args.join(' ').replace(operatorToken, '<operator token>')}`);
  const r = spawnSync(st, args, {
    cwd: projectRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    env: { ...process.env, SCHEMATHESIS_HOOKS: 'scripts.fuzz_hooks', ...seeded, ...env },
  });
  const log = path.join(dataDir, `${document}.txt`);
  fs.writeFileSync(log, r.stdout ?? '');
  // The end of Schemathesis's own report (failures and its summary); the whole of it is in the log file.
  out((r.stdout ?? '').split('\n').slice(-60).join('\n'));
  return { document, ...countRun(report, r.stdout ?? ''), exit: r.status ?? 1 };
}

/**
 * Requests and server errors from the HAR log of every exchange; operations tested and failures by
 * check from Schemathesis's summary ("Tested: N", "❌ ST202 Schema-valid request rejected: 10").
 */
function countRun(har: string, stdout: string): Omit<Figures, 'document' | 'exit'> {
  const entries = fs.existsSync(har)
    ? (JSON.parse(fs.readFileSync(har, 'utf8')) as { log: { entries: Array<{ response: { status: number } }> } }).log.entries
    : [];
  const failures: Record<string, number> = {};
  const summary = stdout.slice(stdout.lastIndexOf('SUMMARY'));
  for (const m of summary.matchAll(/❌ (ST\d+[^:\n]*): (\d+)/g)) failures[m[1]] = Number(m[2]);
  return {
    operations: Number(/Tested: (\d+)/.exec(summary)?.[1] ?? 0),
    requests: entries.length,
    serverErrors: entries.filter((e) => e.response.status >= 500).length,
    failures,
  };
}

const results: Figures[] = [];
try {
  seeded = await seedRecords();
  results.push(run('customer', '/api-docs/openapi.json', { FUZZ_TOKENS: tokens.join(',') }, []));
  results.push(run('operator', '/admin/v1/openapi.json', {}, ['--header', `Authorization: Bearer ${operatorToken}`]));
} finally {
  await stack.stop();
}

out(
  `\n== fuzz summary (seed ${seed}, at most ${examples} examples per operation, ${workers} workers` +
    `${include ? `, paths matching ${include}` : ''})`,
);
for (const f of results) {
  const failed = Object.entries(f.failures)
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');
  out(
    `${f.document}: ${f.operations} operations, ${f.requests} requests, ${f.serverErrors} server errors, ` +
      `${Object.values(f.failures).reduce((a, b) => a + b, 0)} failed checks${failed ? ` (${failed})` : ''}; st exit ${f.exit}`,
  );
}
out(`reports and logs in ${dataDir}`);
process.exit(results.every((f) => f.exit === 0) ? 0 : 1);
