// `npm run conformance`: the official MCP conformance suite (@modelcontextprotocol/conformance)
// against this API's /mcp, on a stack started for this run only.
//
// - `server` under each protocol revision's frozen requirement set: 2025-11-25 (the legacy era,
//   `initialize`) and 2026-07-28 (the modern era, stateless with per-request `_meta`). The suite
//   connects without credentials and has no option to send one, so it talks to /mcp through a
//   loopback relay that adds `Authorization: Bearer <an OAuth access token for /mcp>` (obtained
//   through the real sign-in and consent pages) to each request it passes on, Host and Origin
//   untouched (the DNS-rebinding scenario sends a foreign Origin).
// - `authorization` against the authorization server: its RFC 8414 metadata and the authorization
//   code grant, the person's sign-in and consent done on our pages by this script.
//
// Failures the suite's reference fixture alone can pass (its `test_*` tools, resources and
// prompts, which /mcp does not have) are listed in scripts/conformance-baseline.yml; any other
// failure, or a listed one that passes, fails the run. Results: test/artifacts/conformance/.
// `--keep-results` keeps the stack's logs. docs/mcp.md has the last run's figures.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { privateRunStack, projectRoot } from './stack.js';
import { TEST_SECRETS, secretsEnv } from './secrets.js';
import { freePort } from './embedded-pg.js';
import { CAPABILITY_SCOPES, ELEVATION_SCOPES } from '../domain/oauth/index.js';

const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
// MCP_CONFORMANCE_BIN: the suite's dist/index.js from another install (to try another version).
const bin = process.env.MCP_CONFORMANCE_BIN ?? path.join(projectRoot, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
if (!fs.existsSync(bin)) {
  process.stderr.write(`${bin} is missing: run npm ci (the suite is a devDependency)\n`);
  process.exit(1);
}
/** Each revision's expected failures (a check can fail under one wire and pass under the other). */
const baselineOf = (revision: string) => path.join(projectRoot, 'scripts/conformance-baseline', `${revision}.yml`);
const out = path.join(projectRoot, 'test/artifacts/conformance', new Date().toISOString().replace(/[:.]/g, '-'));
fs.mkdirSync(out, { recursive: true });
const say = (line: string) => process.stdout.write(`${line}\n`);

say('== starting the stack');
const { stack, dataDir } = await privateRunStack('svc-conformance', {
  ...secretsEnv(TEST_SECRETS),
  LOG_LEVEL: 'warn',
  // The suite's scenarios come from one address with one credential, hundreds of requests a minute.
  RATE_LIMIT_PER_MINUTE: '100000',
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: '100000',
  OAUTH_REGISTRATIONS_PER_MINUTE: '100000',
});
say(`stack up: api ${stack.apiUrl}, logs in ${dataDir}`);

// The test helpers read the stack's address and the operator token from the environment when loaded.
process.env.API_URL = stack.apiUrl;
process.env.OPERATOR_TOKEN = TEST_SECRETS.OPERATOR_TOKEN;
const { personWithPassword } = await import('../test/support/people.js');
const { Browser, authorizedRedirect, clientId, connect, resourceOf } = await import('../test/support/oauth.js');

/** Runs the suite's CLI; answers its exit status and output (kept in `<name>.log`). */
function conformance(name: string, args: string[], onLine: (line: string) => void = () => {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd: out, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let partial = '';
    const take = (chunk: Buffer) => {
      const text = chunk.toString();
      output += text;
      partial += text;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) onLine(line);
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', reject);
    child.once('close', (code) => {
      fs.writeFileSync(path.join(out, `${name}.log`), output);
      resolve({ code: code ?? 1, output });
    });
  });
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'SKIPPED' | 'INFO';
  errorMessage?: string;
}

/** Every checks.json under `dir`, by scenario (its directory name less the suite's timestamp). */
function checksUnder(dir: string): Map<string, Check[]> {
  const found = new Map<string, Check[]>();
  if (!fs.existsSync(dir)) return found;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.name !== 'checks.json') continue;
    const scenario = path
      .basename(entry.parentPath)
      .replace(/^server-/, '')
      .replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    found.set(scenario, JSON.parse(fs.readFileSync(path.join(entry.parentPath, entry.name), 'utf8')));
  }
  return found;
}

const failed: string[] = [];
const summary: string[] = [];
try {
  const who = await personWithPassword({ name: 'Conformance' });
  // Every capability and elevation ticked: the suite's calls are judged on the protocol, not on our scopes.
  const { tokens } = await connect(who, resourceOf(null), { scopes: [...CAPABILITY_SCOPES, ...ELEVATION_SCOPES] });

  // The relay: the suite's requests to /mcp with the bearer added, nothing else changed.
  const api = new URL(stack.apiUrl);
  const relay = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: req.headers.authorization ?? `Bearer ${tokens.access_token}` };
    const upstream = http.request({ host: api.hostname, port: api.port, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const relayPort = await freePort();
  await new Promise<void>((resolve) => relay.listen(relayPort, '127.0.0.1', resolve));

  for (const revision of REVISIONS) {
    say(`\n== server, requirements ${revision} (${revision === '2026-07-28' ? 'modern era' : 'legacy era'})`);
    const dir = path.join(out, `server-${revision}`);
    const run = await conformance(`server-${revision}`, [
      'server',
      '--url',
      `http://127.0.0.1:${relayPort}/mcp`,
      '--requirements',
      revision,
      '--expected-failures',
      baselineOf(revision),
      '-o',
      dir,
    ]);
    const checks = checksUnder(dir);
    let passed = 0;
    let total = 0;
    for (const [scenario, list] of [...checks].sort()) {
      const scored = list.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE' || c.status === 'WARNING');
      const ok = scored.filter((c) => c.status === 'SUCCESS').length;
      passed += ok;
      total += scored.length;
      const bad = scored.filter((c) => c.status !== 'SUCCESS').map((c) => c.id);
      summary.push(`| ${revision} | ${scenario} | ${ok}/${scored.length} | ${[...new Set(bad)].join(', ')} |`);
    }
    say(`${revision}: ${passed}/${total} checks passed in ${checks.size} scenarios; exit ${run.code} (0: no failure outside the baseline)`);
    if (run.code !== 0) failed.push(`server ${revision}`);
  }
  relay.close();

  // The DNS-rebinding scenario's request sent straight to the API, as a rebinding page would send
  // it: no credential (a browser adds none), a foreign Host and Origin. Through the relay the suite
  // sees a 200, because the relay adds the bearer; here it must be a 4xx.
  const rebinding = await new Promise<{ status: number }>((resolve, reject) => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rebinding', version: '1' } },
    });
    const req = http.request(
      {
        host: api.hostname,
        port: api.port,
        method: 'POST',
        path: '/mcp',
        headers: {
          host: 'evil.example.com',
          origin: 'http://evil.example.com',
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      },
      (res) => {
        res.resume();
        resolve({ status: res.statusCode ?? 0 });
      },
    );
    req.once('error', reject);
    req.end(body);
  });
  say(`a rebinding page's initialize, straight to the API: ${rebinding.status}`);
  summary.push(
    `| direct | dns-rebinding without the relay's bearer | ${rebinding.status >= 400 && rebinding.status < 500 ? 'SUCCESS' : 'FAILURE'} | HTTP ${rebinding.status} |`,
  );
  if (rebinding.status < 400 || rebinding.status >= 500) failed.push('dns-rebinding without the relay');

  say('\n== authorization server');
  const callbackPort = await freePort();
  const redirect = `http://127.0.0.1:${callbackPort}/callback`;
  const client = await clientId({ client_name: 'MCP conformance', redirect_uris: [redirect] });
  let driven: Promise<unknown> = Promise.resolve();
  const run = await conformance(
    'authorization',
    [
      'authorization',
      '--url',
      stack.apiUrl,
      '--client-id',
      client,
      '--resource',
      resourceOf(null),
      '-p',
      String(callbackPort),
      '-o',
      path.join(out, 'authorization'),
    ],
    (line) => {
      // The suite prints the authorization URL for a person to open: the person here is this script.
      if (!line.startsWith(`${stack.apiUrl}/oauth/authorize?`)) return;
      driven = authorizedRedirect(new Browser(), line.trim(), who, { redirect })
        .then((back) => fetch(back))
        .catch((err: Error) => say(`driving the pages failed: ${err.message}`));
    },
  );
  await driven;
  for (const [scenario, list] of checksUnder(path.join(out, 'authorization'))) {
    for (const c of list) summary.push(`| authorization | ${scenario} | ${c.status} | ${c.errorMessage ?? ''} |`);
  }
  say(`authorization: exit ${run.code}`);
  if (run.code !== 0) failed.push('authorization');
} finally {
  await stack.stop();
}

const table = ['| run | scenario | passed | not passed |', '|---|---|---|---|', ...summary].join('\n');
fs.writeFileSync(path.join(out, 'summary.md'), `${table}\n`);
say(`\n${table}\n\nresults in ${path.relative(projectRoot, out)}`);
if (failed.length) {
  say(`failed: ${failed.join(', ')}; stack logs kept in ${dataDir}`);
  process.exit(1);
}
if (!process.argv.includes('--keep-results')) fs.rmSync(dataDir, { recursive: true, force: true });
