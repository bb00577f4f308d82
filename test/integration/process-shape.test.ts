import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { API_URL, api, eventually, newTenant, uniquePhone } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';
import net from 'node:net';
import tls from 'node:tls';
import http2 from 'node:http2';
import crypto from 'node:crypto';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import pg from 'pg';
import { freePort, startEmbeddedPg } from '../../scripts/embedded-pg.js';
import { parseDatabaseUrl } from '../../config.js';
import { waitForPort } from '../../temporal/dev-server.js';
import { searchAttributeKeys } from '../../temporal/search-attributes.js';

// The processes of the production shape (docs/deploy.md) on the stack the test runner started:
// probes, a database the API cannot reach, sslmode reaching the driver, and the one-shot setup scripts.

const root = path.resolve(import.meta.dirname, '../..');
const logDir = process.env.TEST_DATA_DIR;
const out = (name: string) => (logDir ? fs.openSync(path.join(logDir, `shape-${name}.log`), 'a') : 'ignore');

/** An API process of its own (no worker) with some variables changed. */
async function privateApi(name: string, env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'api/main.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', out(name), out(name)],
  });
  try {
    await waitForPort(port, 120_000, child);
  } catch (err) {
    // Left running, the child would keep this file from ever ending.
    child.kill('SIGKILL');
    throw err;
  }
  return { url: `http://127.0.0.1:${port}`, stop: () => stop(child) };
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
  });

/** Runs an npm script's entry the way `npm run` does, to its exit. */
function runScript(script: string, env: Record<string, string>, timeoutMs = 120_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: root,
      env: { ...process.env, LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (b) => (output += b));
    child.stderr.on('data', (b) => (output += b));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not exit within ${timeoutMs} ms: ${output}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

test('GET /healthz answers 200 without auth; /readyz checks PostgreSQL and Temporal', async () => {
  const health = await fetch(`${API_URL}/healthz`);
  assert.equal(health.status, 200);
  assert.equal((await health.json()).status, 'ok');
  const ready = await fetch(`${API_URL}/readyz`);
  const body = await ready.json();
  assert.equal(ready.status, 200, JSON.stringify(body));
  assert.equal(body.status, 'ready');
  assert.equal(body.checks.database.ok, true);
  assert.equal(body.checks.temporal.ok, true);
  assert.equal(ready.headers.get('cache-control'), 'no-store');
  const post = await fetch(`${API_URL}/readyz`, { method: 'POST' });
  assert.equal(post.status, 405);
});

test('the probes are not part of the customer OpenAPI document', async () => {
  const doc = await (await fetch(`${API_URL}/api-docs/openapi.json`)).json();
  assert.ok(Object.keys(doc.paths).length > 10, 'the document lists the customer routes');
  for (const p of ['/healthz', '/readyz']) assert.equal(doc.paths[p], undefined, p);
});

test('an API whose database is unreachable is alive but not ready, naming the database', async () => {
  const closed = await freePort();
  const api = await privateApi('no-db', { DATABASE_URL: `postgres://postgres:postgres@127.0.0.1:${closed}/svc` });
  try {
    assert.equal((await fetch(`${api.url}/healthz`)).status, 200);
    const ready = await fetch(`${api.url}/readyz`);
    const body = await ready.json();
    assert.equal(ready.status, 503);
    assert.equal(body.status, 'not ready');
    assert.equal(body.checks.database.ok, false);
    assert.match(body.checks.database.error, /ECONNREFUSED/);
    assert.equal(body.checks.temporal.ok, true, 'Temporal is still reachable');
  } finally {
    await api.stop();
  }
});

test('sslmode in DATABASE_URL reaches the driver: require asks this plain-TCP server for TLS and is refused', async () => {
  const url = process.env.DATABASE_URL!;
  const api = await privateApi('sslmode', { DATABASE_URL: `${url}?sslmode=require` });
  try {
    const body = await (await fetch(`${api.url}/readyz`)).json();
    assert.equal(body.checks.database.ok, false);
    assert.match(body.checks.database.error, /does not support SSL/);
  } finally {
    await api.stop();
  }
  const plain = await privateApi('sslmode-disable', { DATABASE_URL: `${url}?sslmode=disable&application_name=shape-test` });
  try {
    assert.equal((await fetch(`${plain.url}/readyz`)).status, 200);
  } finally {
    await plain.stop();
  }
});

test('npm run migrate: exits 0 with the schema up to date; a refused connection exits non-zero', async () => {
  const ok = await runScript('scripts/migrate.ts', {});
  assert.equal(ok.code, 0, ok.output);
  assert.match(ok.output, /schema up to date/);
  const bad = await runScript('scripts/migrate.ts', { DATABASE_URL: `${process.env.DATABASE_URL}?sslmode=require` });
  assert.notEqual(bad.code, 0, bad.output);
  assert.match(bad.output, /does not support SSL/);
});

/**
 * A certificate authority and a server certificate for 127.0.0.1 made by openssl for this run, and a
 * second authority that signed nothing. As root, PostgreSQL runs as the postgres user, which must
 * own the key (and may then be the only one to read it).
 */
function testCertificates(dir: string) {
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  for (const ca of ['ca', 'other-ca'])
    ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${ca}.key`,
      '-out',
      `${ca}.crt`,
      '-days',
      '2',
      '-subj',
      `/CN=svc test ${ca}`,
    );
  /** A key and a certificate for `subject`, signed by the authority `ca`, with the extensions in `ext` (which make it X.509 v3). */
  const issue = (name: string, subject: string, ca: string, ext: string) => {
    fs.writeFileSync(path.join(dir, `${name}.ext`), `${ext}\n`);
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${subject}`);
    const signed = ['-CA', `${ca}.crt`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '2', '-extfile', `${name}.ext`];
    ssl('x509', '-req', '-in', `${name}.csr`, '-out', `${name}.crt`, ...signed);
  };
  issue('server', 'localhost', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost');
  // Client certificates (mTLS to Temporal): one the authority signed, one the other authority signed.
  // X.509 v3 (an extension makes it so): the SDK's TLS stack refuses v1 certificates.
  issue('client', 'svc client', 'ca', 'extendedKeyUsage=clientAuth');
  issue('stranger', 'svc stranger', 'other-ca', 'extendedKeyUsage=clientAuth');
  fs.chmodSync(path.join(dir, 'server.key'), 0o600);
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    fs.chmodSync(dir, 0o755);
    for (const f of ['server.key', 'server.crt']) fs.chownSync(path.join(dir, f), uid, gid);
  }
  return {
    ca: path.join(dir, 'ca.crt'),
    otherCa: path.join(dir, 'other-ca.crt'),
    cert: path.join(dir, 'server.crt'),
    key: path.join(dir, 'server.key'),
    client: { cert: path.join(dir, 'client.crt'), key: path.join(dir, 'client.key') },
    stranger: { cert: path.join(dir, 'stranger.crt'), key: path.join(dir, 'stranger.key') },
  };
}

/** A directory of this run's certificates (testCertificates) for `fn`, removed afterwards whatever happens. */
async function withCertificates(prefix: string, fn: (certs: ReturnType<typeof testCertificates>, dir: string) => Promise<void>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    await fn(testCertificates(dir), dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test(
  'DATABASE_URL with sslmode=verify-full against a PostgreSQL that speaks TLS: migrate, a ready API, encrypted sessions; a wrong CA is refused',
  { timeout: 240_000 },
  () =>
    withCertificates('svc-tls-', async (certs, dir) => {
      const server = await startEmbeddedPg(path.join(dir, 'pg', 'data'), await freePort(), 'svc', [
        'ssl=on',
        `ssl_cert_file=${certs.cert}`,
        `ssl_key_file=${certs.key}`,
      ]);
      try {
        const url = `${server.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.ca)}`;
        const migrated = await runScript('scripts/migrate.ts', { DATABASE_URL: url });
        assert.equal(migrated.code, 0, migrated.output);

        const api = await privateApi('tls', { DATABASE_URL: url });
        try {
          const ready = await fetch(`${api.url}/readyz`);
          assert.equal(ready.status, 200, await ready.text());
          // The API's own sessions (its pool, opened for the readiness check) are encrypted too.
          const client = new pg.Client(parseDatabaseUrl(url, {}));
          await client.connect();
          try {
            const mine = await client.query('select ssl, version from pg_stat_ssl where pid = pg_backend_pid()');
            assert.equal(mine.rows[0].ssl, true);
            assert.match(mine.rows[0].version, /^TLSv1\.[23]$/);
            const sessions = await client.query(
              `select count(*) filter (where s.ssl)::int as tls, count(*)::int as all from pg_stat_activity a join pg_stat_ssl s using (pid)
            where a.datname = 'svc' and a.pid <> pg_backend_pid()`,
            );
            assert.ok(sessions.rows[0].all >= 1, 'the API holds a session');
            assert.equal(sessions.rows[0].tls, sessions.rows[0].all, 'every session of the API is encrypted');
          } finally {
            await client.end();
          }
        } finally {
          await api.stop();
        }

        // The chain is checked: a server certificate the named authority did not sign is refused.
        const wrongCa = await runScript('scripts/migrate.ts', {
          DATABASE_URL: `${server.url}?sslmode=verify-full&sslrootcert=${encodeURIComponent(certs.otherCa)}`,
        });
        assert.notEqual(wrongCa.code, 0, wrongCa.output);
        assert.match(wrongCa.output, /certificate/i);
      } finally {
        await server.stop();
      }
    }),
);

test('npm run temporal:setup registers a missing namespace and its search attributes, and a second run changes nothing', async () => {
  const namespace = `shape-${process.pid}`;
  const env = { TEMPORAL_NAMESPACE: namespace, TEMPORAL_SETUP_WAIT_SECONDS: '90' };
  const first = await runScript('scripts/temporal-setup.ts', env, 150_000);
  assert.equal(first.code, 0, first.output);
  assert.match(first.output, /namespace registered/);
  assert.match(first.output, /search attributes registered|already registered/);
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS! });
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    for (const key of searchAttributeKeys) assert.equal(listed.customAttributes?.[key.name], 2, `${key.name} is a Keyword`);
  } finally {
    await connection.close();
  }
  const second = await runScript('scripts/temporal-setup.ts', env);
  assert.equal(second.code, 0, second.output);
  assert.match(second.output, /search attributes already registered/);
  assert.doesNotMatch(second.output, /namespace registered/);
});

/**
 * An API and a worker of their own with these Temporal variables: the API is ready, and an SMS sent
 * through it reaches the provider, its workflow run by the private worker (whose only way to
 * Temporal is the one the variables name).
 */
async function sendsThrough(temporalEnv: Record<string, string>) {
  const stack = await privateStack(temporalEnv);
  try {
    const ready = await fetch(`${stack.apiUrl}/readyz`);
    assert.equal(ready.status, 200, await ready.text());
    const t = await newTenant();
    const sent = await api('POST', `${stack.apiUrl}/api/v3/sms/send`, t.token, { recipient: uniquePhone(), message: 'through the front' });
    assert.equal(sent.status, 201, sent.text);
    const uid = sent.body.data.messages[0].uid;
    const seen = await eventually(
      () => api('GET', `${stack.apiUrl}/api/v3/sms/${uid}`, t.token),
      (r) => ['sent', 'delivered'].includes(r.body?.data?.status),
      60_000,
      500,
    );
    assert.ok(['sent', 'delivered'].includes(seen.body.data.status), seen.text);
  } finally {
    await stack.stop();
  }
}

test(
  'Temporal over mTLS (the TEMPORAL_TLS_* variables): an API and a worker behind a TLS front that demands a client certificate send a message; other certificates are refused',
  { timeout: 240_000 },
  () =>
    withCertificates('svc-temporal-tls-', async (certs) => {
      // The dev server speaks plain gRPC; this front terminates TLS (HTTP/2 by ALPN) and checks the
      // client's certificate against the authority, as an mTLS cluster or Temporal Cloud does.
      const [host, port] = process.env.TEMPORAL_ADDRESS!.split(':');
      let verified = 0;
      const front = tls.createServer(
        {
          key: fs.readFileSync(certs.key),
          cert: fs.readFileSync(certs.cert),
          ca: fs.readFileSync(certs.ca),
          requestCert: true,
          rejectUnauthorized: true,
          ALPNProtocols: ['h2'],
        },
        (socket) => {
          if (socket.authorized) verified++;
          const upstream = net.connect(Number(port), host);
          socket.pipe(upstream).pipe(socket);
          const close = () => (socket.destroy(), upstream.destroy());
          socket.on('error', close);
          upstream.on('error', close);
        },
      );
      await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
      const address = `localhost:${(front.address() as net.AddressInfo).port}`;
      const tlsEnv = {
        TEMPORAL_ADDRESS: address,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca,
        TEMPORAL_TLS_CLIENT_CERT_PATH: certs.client.cert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: certs.client.key,
      };
      try {
        // Certificates the front must refuse: none, and one another authority signed.
        const serverCa = fs.readFileSync(certs.ca);
        for (const clientCertPair of [undefined, { crt: fs.readFileSync(certs.stranger.cert), key: fs.readFileSync(certs.stranger.key) }])
          await assert.rejects(
            Connection.connect({ address, tls: { serverRootCACertificate: serverCa, clientCertPair }, connectTimeout: '5s' }).then((c) =>
              c.close(),
            ),
          );
        assert.equal(verified, 0, 'no refused client got through');

        await sendsThrough(tlsEnv);
        assert.ok(verified >= 2, `the API and the worker connected with their certificate (${verified} connections)`);
      } finally {
        front.close();
      }
    }),
);

/**
 * A TLS front that speaks gRPC's HTTP/2 and lets a stream through to the dev server only with the
 * API key in its authorization metadata, as Temporal Cloud's API-key endpoints do.
 */
async function apiKeyFront(certs: { key: string; cert: string }, apiKey: string) {
  const upstream = http2.connect(`http://${process.env.TEMPORAL_ADDRESS!}`);
  upstream.on('error', () => {});
  let keyed = 0;
  const front = http2.createSecureServer({ key: fs.readFileSync(certs.key), cert: fs.readFileSync(certs.cert) });
  front.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    if (headers.authorization !== `Bearer ${apiKey}`) {
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'API key not accepted' },
        { endStream: true },
      );
      return;
    }
    keyed++;
    const forwarded: http2.OutgoingHttpHeaders = { ':method': headers[':method'], ':path': headers[':path'] };
    for (const [k, v] of Object.entries(headers)) if (!k.startsWith(':') && k !== 'authorization') forwarded[k] = v;
    const req = upstream.request(forwarded);
    req.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    let trailers: http2.OutgoingHttpHeaders = {};
    req.on('trailers', (t) => (trailers = t));
    req.on('response', (h) => {
      // A trailers-only answer (an error status in the headers) ends the stream with them.
      if (h['grpc-status'] !== undefined) return stream.respond(h, { endStream: true });
      stream.respond(h, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      req.pipe(stream);
    });
    stream.pipe(req);
    stream.on('close', () => req.close());
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  return {
    address: `localhost:${(front.address() as net.AddressInfo).port}`,
    keyed: () => keyed,
    close: () => (front.close(), upstream.close()),
  };
}

test(
  'Temporal with an API key (TEMPORAL_API_KEY, TLS on by itself): an API and a worker behind a front that checks the key send a message; a wrong key is refused',
  { timeout: 240_000 },
  () =>
    withCertificates('svc-temporal-key-', async (certs) => {
      const apiKey = `key-${crypto.randomUUID()}`;
      const front = await apiKeyFront(certs, apiKey);
      try {
        const serverRootCACertificate = fs.readFileSync(certs.ca);
        await assert.rejects(
          Connection.connect({ address: front.address, tls: { serverRootCACertificate }, apiKey: 'wrong', connectTimeout: '5s' }).then(
            (c) => c.close(),
          ),
          (err: Error) => /API key not accepted/.test(String(err.cause ?? err)),
        );
        assert.equal(front.keyed(), 0);

        await sendsThrough({ TEMPORAL_ADDRESS: front.address, TEMPORAL_API_KEY: apiKey, TEMPORAL_TLS_SERVER_CA_CERT_PATH: certs.ca });
        assert.ok(front.keyed() > 0, 'calls carried the key');
      } finally {
        front.close();
      }
    }),
);
