// Writes the next migration by diffing the entities against a scratch database that has every
// committed migration applied. Usage: npm run migration:create
import os from 'node:os';
import fs from 'node:fs';
import path from 'node:path';
import { openOrm } from '../entities/orm.js';
import { freePort, startEmbeddedPg } from './embedded-pg.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-migrate-'));
const pg = await startEmbeddedPg(path.join(dir, 'pg'), await freePort());
try {
  const orm = await openOrm(pg.url);
  await orm.migrator.up();
  const result = await orm.migrator.create(undefined, false, false);
  process.stdout.write(result.fileName ? `created ${result.fileName}\n` : 'no changes\n');
  await orm.close();
} finally {
  await pg.stop();
  fs.rmSync(dir, { recursive: true, force: true });
}
