import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import assert from 'node:assert/strict';
import { loadConfig, parseDatabaseUrl, poolIdleMillis, poolMaxOf, POOL_DEFAULTS, temporalConnectConfig } from '../../config.js';
import { ormConfig } from '../../entities/orm.js';
import { openOrm } from '../../entities/orm.js';

// DATABASE_URL read as libpq reads it (config.ts parseDatabaseUrl), and the Temporal connection
// through @temporalio/envconfig: what each deployment variable turns into for the drivers.

const files: Record<string, string> = { '/ca.pem': 'CA', '/client.crt': 'CERT', '/client.key': 'KEY' };
const read = (f: string) => {
  if (!(f in files)) throw new Error(`ENOENT: no such file, open '${f}'`);
  return files[f];
};
const parse = (url: string, env: NodeJS.ProcessEnv = {}) => parseDatabaseUrl(url, env, read);
const BASE = 'postgres://app:p%40ss%2Fword@db.example.com:6432/svc';

test('host, port, user, password and database come from the URL, percent-decoded; no sslmode is plain TCP', () => {
  assert.deepEqual(parse(BASE), {
    host: 'db.example.com',
    port: 6432,
    user: 'app',
    password: 'p@ss/word',
    database: 'svc',
    ssl: false,
  });
  assert.equal(parse('postgresql://u@h/d').port, 5432, 'the default port');
  assert.equal(parse('postgres://u@[::1]:5433/d').host, '::1', 'an IPv6 host without its brackets');
  assert.equal(parse('postgres:///svc?host=/var/run/postgresql').host, '/var/run/postgresql', 'a socket directory as libpq takes it');
});

test('sslmode disable, allow and prefer connect in plain text (pg cannot fall back from TLS)', () => {
  for (const mode of ['disable', 'allow', 'prefer']) assert.equal(parse(`${BASE}?sslmode=${mode}`).ssl, false, mode);
});

test('sslmode=require encrypts without checking the certificate, unless a root certificate is given (then verify-ca)', () => {
  assert.deepEqual(parse(`${BASE}?sslmode=require`).ssl, { rejectUnauthorized: false });
  const withRoot = parse(`${BASE}?sslmode=require&sslrootcert=/ca.pem`).ssl;
  assert.ok(withRoot);
  assert.equal(withRoot.ca, 'CA');
  assert.equal(withRoot.rejectUnauthorized, true);
  assert.equal(typeof withRoot.checkServerIdentity, 'function', 'the host name is not checked');
  assert.equal(withRoot.checkServerIdentity!('other.example.com', {} as never), undefined);
});

test('verify-ca checks the chain only; verify-full checks chain and host name (Node default)', () => {
  const ca = parse(`${BASE}?sslmode=verify-ca&sslrootcert=/ca.pem`).ssl;
  assert.ok(ca);
  assert.deepEqual(
    { ca: ca.ca, reject: ca.rejectUnauthorized, anyName: ca.checkServerIdentity?.('x', {} as never) },
    { ca: 'CA', reject: true, anyName: undefined },
  );
  const full = parse(`${BASE}?sslmode=verify-full&sslrootcert=/ca.pem`).ssl;
  assert.ok(full);
  assert.equal(full.rejectUnauthorized, true);
  assert.equal(full.checkServerIdentity, undefined, 'the host name is checked by Node');
  const noRoot = parse(`${BASE}?sslmode=verify-full`).ssl;
  assert.ok(noRoot);
  assert.equal(noRoot.ca, undefined, "no sslrootcert: Node's CA store");
});

test('sslrootcert=system means the CA store and verify-full, as in libpq 16', () => {
  const ssl = parse(`${BASE}?sslrootcert=system`).ssl;
  assert.ok(ssl);
  assert.deepEqual([ssl.ca, ssl.rejectUnauthorized, ssl.checkServerIdentity], [undefined, true, undefined]);
  assert.throws(() => parse(`${BASE}?sslmode=require&sslrootcert=system`), /sslrootcert=system needs sslmode=verify-full/);
});

test('a client certificate (mTLS) is read from sslcert and sslkey, with sslpassword; both or neither', () => {
  const ssl = parse(`${BASE}?sslmode=verify-full&sslrootcert=/ca.pem&sslcert=/client.crt&sslkey=/client.key&sslpassword=pw`).ssl;
  assert.ok(ssl);
  assert.deepEqual([ssl.cert, ssl.key, ssl.passphrase], ['CERT', 'KEY', 'pw']);
  assert.throws(() => parse(`${BASE}?sslmode=require&sslcert=/client.crt`), /both sslcert and sslkey/);
});

test('PGSSLMODE, PGSSLROOTCERT and PGAPPNAME fill what the URL leaves out; the URL wins', () => {
  const env = { PGSSLMODE: 'verify-full', PGSSLROOTCERT: '/ca.pem', PGAPPNAME: 'from-env' };
  const c = parse(BASE, env);
  assert.ok(c.ssl);
  assert.deepEqual([c.ssl.ca, c.ssl.rejectUnauthorized, c.application_name], ['CA', true, 'from-env']);
  assert.equal(parse(`${BASE}?sslmode=disable`, env).ssl, false);
});

test('application_name, options, connect_timeout and keepalives reach the driver in its own terms', () => {
  const c = parse(
    `${BASE}?application_name=svc-api&options=-c%20statement_timeout%3D5000&connect_timeout=7&keepalives=1&keepalives_idle=30`,
  );
  assert.deepEqual(
    [c.application_name, c.options, c.connectionTimeoutMillis, c.keepAlive, c.keepAliveInitialDelayMillis],
    ['svc-api', '-c statement_timeout=5000', 7000, true, 30000],
  );
});

test('what cannot be honoured is refused, naming it, instead of ignored', () => {
  assert.throws(() => parse(`${BASE}?sslmode=verify`), /sslmode must be one of/);
  assert.throws(() => parse(`${BASE}?target_session_attrs=read-write`), /parameter "target_session_attrs" is not supported/);
  assert.throws(() => parse(`${BASE}?sslmode=verify-full&sslrootcert=/missing.pem`), /sslrootcert: cannot read \/missing.pem/);
  assert.throws(() => parse('mysql://u@h/d'), /must start with postgres/);
  assert.throws(() => parse('postgres://u@h1,h2/d'), /several hosts/);
  assert.throws(() => parse(`${BASE}?connect_timeout=soon`), /connect_timeout must be a number/);
});

test('the parsed TLS options reach the pg Pool MikroORM builds (driverOptions override clientUrl)', async () => {
  const url = `postgres://u:p@127.0.0.1:1/x?sslmode=verify-ca&sslrootcert=/ca.pem&application_name=probe`;
  const orm = await openOrm(url, 3, { ...parse(url) });
  try {
    const connection = orm.driver.getConnection() as unknown as { mapOptions(o: unknown): Record<string, any> };
    const options = connection.mapOptions(orm.config.get('driverOptions'));
    assert.equal(options.ssl.ca, 'CA');
    assert.equal(options.ssl.rejectUnauthorized, true);
    assert.equal(typeof options.ssl.checkServerIdentity, 'function');
    assert.deepEqual([options.max, options.application_name, options.host, options.port], [3, 'probe', '127.0.0.1', 1]);
  } finally {
    await orm.close();
  }
});

test('pool sizes: DATABASE_POOL_MAX for any process, else the role default', () => {
  const saved = process.env.DATABASE_POOL_MAX;
  try {
    delete process.env.DATABASE_POOL_MAX;
    const unset = loadConfig();
    assert.deepEqual([poolMaxOf(unset, 'api'), poolMaxOf(unset, 'worker')], [POOL_DEFAULTS.api, POOL_DEFAULTS.worker]);
    process.env.DATABASE_POOL_MAX = '7';
    const set = loadConfig();
    assert.deepEqual([poolMaxOf(set, 'api'), poolMaxOf(set, 'worker')], [7, 7]);
    process.env.DATABASE_POOL_MAX = '0';
    assert.throws(() => loadConfig(), /DATABASE_POOL_MAX must be a whole number of at least 1/);
  } finally {
    if (saved === undefined) delete process.env.DATABASE_POOL_MAX;
    else process.env.DATABASE_POOL_MAX = saved;
  }
});

test('pool idle timeout: DATABASE_POOL_IDLE_SECONDS, 300 s unset, 0 for never; the pool gets it, other driver options stay', () => {
  const saved = process.env.DATABASE_POOL_IDLE_SECONDS;
  try {
    delete process.env.DATABASE_POOL_IDLE_SECONDS;
    assert.equal(poolIdleMillis(loadConfig()), 300_000);
    process.env.DATABASE_POOL_IDLE_SECONDS = '0';
    assert.equal(poolIdleMillis(loadConfig()), 0);
    process.env.DATABASE_POOL_IDLE_SECONDS = '2.5';
    assert.equal(poolIdleMillis(loadConfig()), 2500);
    process.env.DATABASE_POOL_IDLE_SECONDS = '-1';
    assert.throws(() => loadConfig(), /DATABASE_POOL_IDLE_SECONDS must be a number of at least 0/);
  } finally {
    if (saved === undefined) delete process.env.DATABASE_POOL_IDLE_SECONDS;
    else process.env.DATABASE_POOL_IDLE_SECONDS = saved;
  }
  const set = ormConfig('postgres://u:p@127.0.0.1:5432/db', 7, { idleTimeoutMillis: 0, application_name: 'api' });
  assert.deepEqual(set.pool, { min: 0, max: 7, idleTimeoutMillis: 0 });
  assert.equal((set.driverOptions as Record<string, unknown>).application_name, 'api');
  assert.deepEqual(ormConfig('postgres://u:p@127.0.0.1:5432/db', 2).pool, { min: 0, max: 2 }, "unset: pg's own default");
});

test('Temporal: address and namespace default to the local dev server; empty variables count as unset', () => {
  assert.deepEqual(temporalConnectConfig({}), { connection: { address: '127.0.0.1:7233' }, namespace: 'default' });
  assert.deepEqual(temporalConnectConfig({ TEMPORAL_ADDRESS: '', TEMPORAL_NAMESPACE: '' }), {
    connection: { address: '127.0.0.1:7233' },
    namespace: 'default',
  });
  assert.deepEqual(temporalConnectConfig({ TEMPORAL_ADDRESS: 'temporal:7233', TEMPORAL_NAMESPACE: 'svc' }), {
    connection: { address: 'temporal:7233' },
    namespace: 'svc',
  });
});

test('Temporal Cloud with an API key: TLS on by itself; TEMPORAL_TLS=false turns it off', () => {
  const cloud = temporalConnectConfig({
    TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
    TEMPORAL_NAMESPACE: 'svc.a1b2c',
    TEMPORAL_API_KEY: 'key-123',
  });
  assert.deepEqual(cloud, {
    connection: { address: 'us-east-1.aws.api.temporal.io:7233', tls: true, apiKey: 'key-123' },
    namespace: 'svc.a1b2c',
  });
  assert.equal(temporalConnectConfig({ TEMPORAL_API_KEY: 'k', TEMPORAL_TLS: 'false' }).connection.tls, false);
});

test('Temporal mTLS: client certificate and key, server CA and name, gRPC metadata', () => {
  const { connection } = temporalConnectConfig({
    TEMPORAL_ADDRESS: 'svc.a1b2c.tmprl.cloud:7233',
    TEMPORAL_TLS_CLIENT_CERT_DATA: 'CERT',
    TEMPORAL_TLS_CLIENT_KEY_DATA: 'KEY',
    TEMPORAL_TLS_SERVER_CA_CERT_DATA: 'CA',
    TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    TEMPORAL_GRPC_META_X_TENANT: 'blue',
  });
  assert.ok(connection.tls && typeof connection.tls === 'object');
  assert.equal(Buffer.from(connection.tls.clientCertPair!.crt).toString(), 'CERT');
  assert.equal(Buffer.from(connection.tls.clientCertPair!.key).toString(), 'KEY');
  assert.equal(Buffer.from(connection.tls.serverRootCACertificate!).toString(), 'CA');
  assert.equal(connection.tls.serverNameOverride, 'temporal.internal');
  assert.deepEqual(connection.metadata, { 'x-tenant': 'blue' });
});

test('Temporal: a TOML profile only when TEMPORAL_CONFIG_FILE names one, never the home directory default', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-envconfig-'));
  try {
    fs.mkdirSync(path.join(dir, 'temporalio'));
    const file = path.join(dir, 'temporalio', 'temporal.toml');
    fs.writeFileSync(
      file,
      '[profile.default]\naddress = "from-file:7233"\nnamespace = "file-ns"\n[profile.cloud]\naddress = "cloud:7233"\napi_key = "k"\n',
    );
    // envconfig's own default lookup would find this file; the service does not look there.
    assert.deepEqual(temporalConnectConfig({ XDG_CONFIG_HOME: dir }), { connection: { address: '127.0.0.1:7233' }, namespace: 'default' });
    assert.deepEqual(temporalConnectConfig({ TEMPORAL_CONFIG_FILE: file }), {
      connection: { address: 'from-file:7233' },
      namespace: 'file-ns',
    });
    assert.deepEqual(temporalConnectConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'env-ns' }), {
      connection: { address: 'cloud:7233', tls: true, apiKey: 'k' },
      namespace: 'env-ns',
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
