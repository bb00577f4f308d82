import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { freePort, startEmbeddedPg } from '../../scripts/embedded-pg.js';

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
    const r = spawnSync(process.execPath, ['-e', child, `postgres://postgres:postgres@127.0.0.1:${port}/logtest`], {
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
