// Issue 27, point 8: what an assistant connected over OAuth pays. On a private stack:
//   call:     one contact read (`get_contact`) as a REST request with the person's key, and as an
//             MCP `tools/call` on /mcp/v1/contacts with an OAuth access token issued to the same
//             person through the sign-in and consent pages; one request at a time over keep-alive,
//             in alternating blocks of 100 so both see the same machine; p50 and p90 of `--n` each
//             after 200 untimed. The bound: the MCP p50 within 1.5× the REST p50.
//   issuance: `--codes` authorization codes made through the pages (untimed), then exchanged at the
//             token endpoint with `--concurrency` in flight (tokens/s), then each grant's refresh
//             token rotated once the same way (refreshes/s).
//   floors:   in this process, a bare ES256 signing loop (what a signed-JWT token would cost at the
//             least), and the opaque token's own floor: 32 random bytes, a SHA-256 and one insert of
//             the hash, at the same concurrency (what storing a token only as its hash costs).
//   npm run bench:mcp-oauth [-- --n 2000 --codes 300 --concurrency 4]
import crypto from 'node:crypto';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { benchStack, numberArg, operatorCaller, percentile, progressLog, r1, r2 } from './lib.js';

const n = numberArg('n', 2000);
const codes = numberArg('codes', 300);
const concurrency = numberArg('concurrency', 4);
const progress = progressLog();

const { stack, dir, accountId, operator } = await benchStack({
  OAUTH_TOKEN_REQUESTS_PER_MINUTE: '100000000',
  OAUTH_REGISTRATIONS_PER_MINUTE: '100000000',
  OAUTH_CODE_TTL_SECONDS: '3600',
});
// The OAuth client steps the tests use, pointed at this stack (they read its address when loaded).
process.env.API_URL = stack.apiUrl;
const oauth = await import('../test/support/oauth.js');
const adminCall = operatorCaller(stack.apiUrl, operator);
const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: concurrency });
const base = new URL(stack.apiUrl);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const out: Record<string, unknown> = {
  n,
  codes,
  concurrency,
  machine: `${os.cpus().length} cores`,
  loadAverage1mAtStart: r1(os.loadavg()[0]),
};

function request(method: 'GET' | 'POST', path: string, bearer: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, accept: 'application/json, text/event-stream' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const req = http.request({ agent, host: base.hostname, port: base.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Runs `fn` over `items` with `concurrency` in flight; answers the rate per second. */
async function rate<T>(items: T[], fn: (item: T) => Promise<void>): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
  return items.length / ((performance.now() - started) / 1000);
}

try {
  // One person who may read and create contacts, with a REST key and a password for the pages.
  const user = await adminCall('POST', `/accounts/${accountId}/users`, {
    email: 'assistant-owner@example.com',
    name: 'Owner',
    permissions: ['contacts.view', 'contacts.create'],
  });
  const key = (await adminCall('POST', `/accounts/${accountId}/keys`, { name: 'rest', user_id: user.id })).token as string;
  const password = `pw ${crypto.randomBytes(12).toString('base64url')} long`;
  await adminCall('PUT', `/accounts/${accountId}/users/${user.id}/password`, { password });
  const person = { email: 'assistant-owner@example.com', password };

  const group = await request('POST', '/api/v3/contact-groups', key, JSON.stringify({ name: 'Bench' }));
  const groupId = JSON.parse(group.text).data.id as number;
  const contact = await request(
    'POST',
    `/api/v3/contact-groups/${groupId}/contacts`,
    key,
    JSON.stringify({ phone_number: '+255712345678', first_name: 'Asha' }),
  );
  if (contact.status !== 201) throw new Error(`contact create: ${contact.status} ${contact.text}`);
  const contactId = JSON.parse(contact.text).data.id as number;

  const resource = oauth.resourceOf('contacts', stack.apiUrl);
  const connected = await oauth.codeFor(person, resource, { base: stack.apiUrl });
  const exchanged = await oauth.exchange(connected, resource, {}, stack.apiUrl);
  if (exchanged.status !== 200) throw new Error(`exchange: ${exchanged.status} ${exchanged.text}`);
  const accessToken = exchanged.body.access_token as string;

  // The same operation through both doors; each answer checked once before timing.
  const restCall = () => request('GET', `/api/v3/contact-groups/${groupId}/contacts/${contactId}`, key);
  let id = 0;
  const mcpCall = () =>
    request(
      'POST',
      '/mcp/v1/contacts',
      accessToken,
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'get_contact', arguments: { group: groupId, contact: contactId } },
      }),
    );
  const mcpKey = (await adminCall('POST', `/accounts/${accountId}/mcp-credentials`, { name: 'mcp', user_id: user.id })).token as string;
  const mcpKeyCall = () =>
    request(
      'POST',
      '/mcp/v1/contacts',
      mcpKey,
      JSON.stringify({
        jsonrpc: '2.0',
        id: ++id,
        method: 'tools/call',
        params: { name: 'get_contact', arguments: { group: groupId, contact: contactId } },
      }),
    );
  const rest = await restCall();
  const mcp = await mcpCall();
  if (rest.status !== 200 || !rest.text.includes('712345678')) throw new Error(`REST read: ${rest.status} ${rest.text.slice(0, 300)}`);
  if (mcp.status !== 200 || !mcp.text.includes('712345678') || mcp.text.includes('"isError":true'))
    throw new Error(`MCP call: ${mcp.status} ${mcp.text.slice(0, 300)}`);

  for (let i = 0; i < 200; i++) {
    await restCall();
    await mcpCall();
  }
  const times: Record<'rest' | 'mcp' | 'mcpKey', number[]> = { rest: [], mcp: [], mcpKey: [] };
  for (let block = 0; block < n / 100; block++) {
    for (const [door, call] of [
      ['rest', restCall],
      ['mcp', mcpCall],
      ['mcpKey', mcpKeyCall],
    ] as const) {
      for (let i = 0; i < 100; i++) {
        const t = performance.now();
        await call();
        times[door].push(performance.now() - t);
      }
    }
  }
  const p = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return { p50: r2(percentile(s, 50)), p90: r2(percentile(s, 90)) };
  };
  const call = { rest: p(times.rest), mcp: p(times.mcp), mcpWithCredential: p(times.mcpKey) };
  out.call = { ...call, mcpOverRestP50: r2(call.mcp.p50 / call.rest.p50), bound: 1.5 };
  progress(`call: REST p50 ${call.rest.p50} ms, MCP p50 ${call.mcp.p50} ms`);

  // Codes through the pages (one browser: it signs in once and consents each time).
  const browser = new oauth.Browser(stack.apiUrl);
  const client = await oauth.clientId({}, stack.apiUrl);
  const made: { client: string; verifier: string; code: string }[] = [];
  for (let i = 0; i < codes; i++) {
    const { verifier, challenge } = oauth.pkce();
    const back = await oauth.authorizeThroughPages(
      browser,
      oauth.authorizeUrl({ client_id: client, code_challenge: challenge, resource }, stack.apiUrl),
      person,
    );
    made.push({ client, verifier, code: back.get('code')! });
  }
  progress(`${codes} codes made through the pages`);
  const refreshTokens: string[] = [];
  const issued = await rate(made, async (c) => {
    const r = await oauth.exchange(c, resource, {}, stack.apiUrl);
    if (r.status !== 200) throw new Error(`exchange: ${r.status} ${r.text}`);
    refreshTokens.push(r.body.refresh_token as string);
  });
  const refreshed = await rate(refreshTokens, async (rt) => {
    const r = await oauth.refresh(client, rt, {}, stack.apiUrl);
    if (r.status !== 200) throw new Error(`refresh: ${r.status} ${r.text}`);
  });
  progress(`issuance ${r1(issued)}/s, refresh ${r1(refreshed)}/s`);

  // Floors in this process: ES256 signatures (one core), and an opaque token's hash stored.
  const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const payload = Buffer.from(JSON.stringify({ sub: '1', aud: resource, scope: 'mcp:use mcp:contacts', exp: 0, jti: 'x' }));
  let signs = 0;
  const signStart = performance.now();
  while (performance.now() - signStart < 2000) {
    crypto.sign('sha256', payload, { key: privateKey, dsaEncoding: 'ieee-p1363' });
    signs++;
  }
  const signsPerSecond = signs / ((performance.now() - signStart) / 1000);
  await pool.query(
    'create unlogged table if not exists bench_token_hashes (hash text primary key, created_at timestamptz not null default now())',
  );
  const stored = await rate(
    Array.from({ length: codes * 4 }, () => 0),
    async () => {
      const hash = crypto.createHash('sha256').update(crypto.randomBytes(32)).digest('base64url');
      await pool.query('insert into bench_token_hashes (hash) values ($1)', [hash]);
    },
  );
  out.issuance = {
    codeExchangesPerSecond: r1(issued),
    refreshesPerSecond: r1(refreshed),
    floorES256SignsPerSecond: Math.round(signsPerSecond),
    floorHashAndInsertPerSecond: Math.round(stored),
  };
  out.loadAverage = fs.readFileSync('/proc/loadavg', 'utf8').trim();
} finally {
  agent.destroy();
  await pool.end();
  await stack.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
