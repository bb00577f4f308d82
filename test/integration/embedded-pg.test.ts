import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import pgDriver from 'pg';
import { freePort, startEmbeddedPg } from '../../scripts/embedded-pg.js';
import { EMBEDDED_PG_PASSWORD, SECRETS_FILE } from '../../scripts/secrets.js';

// The embedded server must never wait on the process that started it. Its log once went to a pipe
// to that process; a test runner blocked in spawnSync stopped reading, the pipe filled with logged
// errors (a unique violation logs about 2 KiB with its statement) and every backend that logged one
// more hung for good, with its request. Here the starting process blocks while a child makes the
// server log far more than a pipe holds.

test('the embedded server keeps answering while the process that started it is blocked and errors are logged', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-'));
  const port = await freePort();
  const pg = await startEmbeddedPg(path.join(dir, 'pg'), port, 'logtest');
  try {
    const child = `
      const pg = require('pg');
      (async () => {
        const c = new pg.Client({ connectionString: process.argv[1] });
        await c.connect();
        const filler = 'x'.repeat(2000);
        let refused = 0;
        for (let i = 0; i < 200; i++) {
          try { await c.query("select 1/0 where '" + filler + "' <> ''"); } catch { refused++; }
        }
        await c.end();
        process.stdout.write(String(refused));
      })();`;
    // 200 errors of over 2 KiB each: several times a pipe's 64 KiB.
    const r = spawnSync(process.execPath, ['-e', child, pg.url], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.signal, null, 'the statements hung: the server blocked writing its log');
    assert.equal(r.stdout, '200', r.stderr);
    const logs = fs.readdirSync(path.join(dir, 'pg', 'log'));
    assert.ok(logs.length > 0, 'the server writes its log under <data>/log');
  } finally {
    await pg.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Whether `password` logs in as postgres on `port`; a refusal of the password is false, anything else throws. */
async function logsIn(port: number, password: string): Promise<boolean> {
  const client = new pgDriver.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '28P01') return false;
    throw err;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const savedSecrets = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, SECRETS_FILE), 'utf8')) as Record<string, string>;

test(
  'each data directory gets its own random password, kept in secrets.json (0600) and still valid after a restart',
  { timeout: 180_000 },
  async () => {
    const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-a-')), fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-b-'))];
    const ports = [await freePort(), await freePort()];
    try {
      const servers = [
        await startEmbeddedPg(path.join(dirs[0], 'pg'), ports[0]),
        await startEmbeddedPg(path.join(dirs[1], 'pg'), ports[1]),
      ];
      const passwords = dirs.map((d) => savedSecrets(d)[EMBEDDED_PG_PASSWORD]);
      try {
        for (const d of dirs) assert.equal(fs.statSync(path.join(d, SECRETS_FILE)).mode & 0o777, 0o600);
        assert.ok(
          passwords.every((p) => p.length >= 32),
          'random, not short',
        );
        assert.notEqual(passwords[0], passwords[1], 'two data directories, two passwords');
        for (const [i, s] of servers.entries()) {
          assert.equal(decodeURIComponent(new URL(s.url).password), passwords[i], 'the URL carries the directory’s password');
          assert.equal(await logsIn(ports[i], passwords[i]), true);
          assert.equal(await logsIn(ports[i], passwords[1 - i]), false, 'the other directory’s password is refused');
          assert.equal(await logsIn(ports[i], 'postgres'), false, 'the old fixed password is refused');
        }
      } finally {
        for (const s of servers) await s.stop();
      }
      // The same directory again: the same password, and the server takes it.
      const again = await startEmbeddedPg(path.join(dirs[0], 'pg'), ports[0]);
      try {
        assert.equal(savedSecrets(dirs[0])[EMBEDDED_PG_PASSWORD], passwords[0]);
        const c = new pgDriver.Client({ connectionString: again.url });
        await c.connect();
        assert.equal((await c.query('select current_database() as db')).rows[0].db, 'svc');
        await c.end();
      } finally {
        await again.stop();
      }
    } finally {
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    }
  },
);

test(
  'a data directory made with the old fixed password is moved to a password of its own on its first start',
  { timeout: 180_000 },
  async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'embedded-pg-old-'));
    const port = await freePort();
    try {
      // As an older launcher left it: the role's password is 'postgres' and secrets.json has no entry for it.
      const first = await startEmbeddedPg(path.join(dir, 'pg'), port);
      const c = new pgDriver.Client({ connectionString: first.url });
      await c.connect();
      await c.query(`alter role postgres with password 'postgres'`);
      await c.query('create table kept (v text)');
      await c.query(`insert into kept values ('from before')`);
      await c.end();
      await first.stop();
      const saved = savedSecrets(dir);
      delete saved[EMBEDDED_PG_PASSWORD];
      fs.writeFileSync(path.join(dir, SECRETS_FILE), JSON.stringify(saved));

      const upgraded = await startEmbeddedPg(path.join(dir, 'pg'), port);
      try {
        const password = savedSecrets(dir)[EMBEDDED_PG_PASSWORD];
        assert.ok(password && password !== 'postgres');
        assert.equal(await logsIn(port, password), true);
        assert.equal(await logsIn(port, 'postgres'), false, 'the old password no longer works');
        const d = new pgDriver.Client({ connectionString: upgraded.url });
        await d.connect();
        assert.deepEqual((await d.query('select v from kept')).rows, [{ v: 'from before' }], 'the data is the same');
        await d.end();
      } finally {
        await upgraded.stop();
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
