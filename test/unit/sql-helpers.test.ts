import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { globSync } from 'node:fs';
import { numberPlaceholders } from '../../entities/db.js';

const root = path.resolve(import.meta.dirname, '../..');

test('placeholders become $n outside quoted text and comments only', () => {
  assert.deepEqual(numberPlaceholders(`select ?, 'a?b''?', "c?" -- d?\n, ? /* e? */, ?`), {
    text: `select $1, 'a?b''?', "c?" -- d?\n, $2 /* e? */, $3`,
    count: 3,
  });
  assert.deepEqual(numberPlaceholders('select 1 - ? / 2'), { text: 'select 1 - $1 / 2', count: 1 });
  assert.deepEqual(numberPlaceholders(`x = '?'`), { text: `x = '?'`, count: 0 });
});

/**
 * Files that still call MikroORM's raw `execute` with values (written into the SQL text). Each is
 * owned by work in progress elsewhere; remove a file from here when it moves to entities/db.ts.
 */
const PENDING = new Set<string>([]);

test('application code runs SQL with values only through the binding helpers of entities/db.ts', () => {
  const files = globSync('{api,services,activities,worker,temporal,entities,scripts}/**/*.ts', { cwd: root }).filter(
    (f) => f.split(path.sep).join('/') !== 'entities/db.ts' && !f.includes('migrations'),
  );
  const offenders = new Set<string>();
  for (const f of files) {
    const text = fs.readFileSync(path.join(root, f), 'utf8');
    // `.execute(<sql>, [values])`: a raw statement with parameters; Kysely's `.execute()` takes none.
    if (/\.execute\(\s*(['"`][\s\S]*?['"`]|[A-Za-z_.]+)\s*,\s*\[/.test(text)) offenders.add(f.split(path.sep).join('/'));
  }
  const unexpected = [...offenders].filter((f) => !PENDING.has(f));
  assert.deepEqual(unexpected, [], 'use many/one/exec from entities/db.ts');
  const done = [...PENDING].filter((f) => !offenders.has(f));
  assert.deepEqual(done, [], 'these files bind now: remove them from PENDING');
});
