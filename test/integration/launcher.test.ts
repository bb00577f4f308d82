import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { spawn } from 'node:child_process';
import { freePort } from '../../scripts/embedded-pg.js';
import { alive, start, stop } from '../support/launcher.js';

test(
  'npm start brings up everything, prints a working key, and Ctrl-C leaves no process behind; data survives a restart',
  { timeout: 300_000 },
  async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-launch-'));
    const ports = { api: await freePort(), temporal: await freePort(), ui: await freePort(), sim: await freePort() };
    const running: Array<ReturnType<typeof spawn>> = [];
    try {
      const first = await start(dataDir, ports);
      running.push(first.child);
      assert.match(first.out(), new RegExp(`Temporal UI\\s+http://127.0.0.1:${ports.ui}`));
      assert.match(first.out(), new RegExp(`API\\s+http://127.0.0.1:${ports.api}`));
      const me = await fetch(`http://127.0.0.1:${ports.api}/api/v3/me`, { headers: { authorization: `Bearer ${first.key}` } });
      assert.equal(me.status, 200);
      const account = (await me.json()).data.id;

      // Random secrets of this data directory, not the public defaults, shared with the simulator.
      const secretsFile = path.join(dataDir, 'secrets.json');
      assert.equal(fs.statSync(secretsFile).mode & 0o777, 0o600);
      const secrets = JSON.parse(fs.readFileSync(secretsFile, 'utf8')) as Record<string, string>;
      assert.equal(first.operator, secrets.OPERATOR_TOKEN, 'the printed operator token is the stored one');
      assert.notEqual(secrets.OPERATOR_TOKEN, 'dev-operator-token');
      // The embedded PostgreSQL's own password is kept there too; the restart below connects with it.
      assert.ok(secrets.EMBEDDED_PG_PASSWORD.length >= 32 && secrets.EMBEDDED_PG_PASSWORD !== 'postgres');
      for (const name of ['SMS_GATEWAY_AUTH_TOKEN', 'WHATSAPP_ACCESS_TOKEN', 'WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN']) {
        assert.ok(secrets[name].length >= 32 && !secrets[name].startsWith('sim-'), name);
        assert.match(first.out(), new RegExp(`${name}=${secrets[name]}`), `${name} printed`);
      }
      const adminApi = (token: string) =>
        fetch(`http://127.0.0.1:${ports.api}/admin/v1/accounts?per_page=1`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal((await adminApi(first.operator)).status, 200);
      assert.equal((await adminApi('dev-operator-token')).status, 401, 'the public default is not the operator token');
      // The simulator signs its receipt with the generated SMS secret; the API verifies it: delivered.
      const sent = await fetch(`http://127.0.0.1:${ports.api}/api/v3/sms/send`, {
        method: 'POST',
        headers: { authorization: `Bearer ${first.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ recipient: '+255700000777', message: 'signed receipt' }),
      });
      const uid = (await sent.json()).data.messages[0].uid as string;
      let status = '';
      for (let i = 0; i < 100 && status !== 'delivered'; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const m = await fetch(`http://127.0.0.1:${ports.api}/api/v3/sms/${uid}`, { headers: { authorization: `Bearer ${first.key}` } });
        status = (await m.json()).data.status as string;
      }
      assert.equal(status, 'delivered', 'the receipt signed with the generated secret was accepted');
      const ui = await fetch(`http://127.0.0.1:${ports.ui}/`);
      assert.equal(ui.status, 200, 'the Temporal web UI answers');
      const family = await stop(first.child);
      assert.ok(family.length >= 5, `children seen: ${family.length}`);
      assert.deepEqual(family.filter(alive), [], 'no orphan processes');

      const second = await start(dataDir, ports);
      running.push(second.child);
      assert.equal(second.key, first.key, 'the same dev key after a restart');
      assert.equal(second.operator, first.operator, 'the same secrets after a restart');
      const again = await fetch(`http://127.0.0.1:${ports.api}/api/v3/me`, { headers: { authorization: `Bearer ${second.key}` } });
      assert.equal((await again.json()).data.id, account, 'the same account: PostgreSQL data survived');
      assert.deepEqual((await stop(second.child)).filter(alive), []);
    } finally {
      for (const c of running) if (c.exitCode === null) await stop(c);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  },
);
