import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

// Workflow code runs in Temporal's deterministic sandbox: it may import only the workflow SDK,
// pure domain code and activity *types*. This is the project's lint rule for workflow files.
const dir = path.resolve(import.meta.dirname, '../../workflows');

test('workflow files import only @temporalio/workflow, domain code, other workflows and activity types', () => {
  const problems: string[] = [];
  for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const src = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of src.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const [, , typeOnly, spec] = m;
      const layer = spec.startsWith('.')
        ? path.relative(path.dirname(dir), path.resolve(dir, path.dirname(file), spec)).split(path.sep)[0]
        : null;
      const ok = spec === '@temporalio/workflow' || layer === 'domain' || layer === 'workflows' || (typeOnly && layer === 'activities');
      if (!ok) problems.push(`${file}: ${m[0].trim()}`);
    }
    if (/\brequire\(|import\(/.test(src)) problems.push(`${file}: dynamic import or require`);
  }
  assert.deepEqual(problems, []);
});

test('domain code used by workflows has no Node built-ins or I/O packages', () => {
  const domain = path.resolve(import.meta.dirname, '../../domain');
  const problems: string[] = [];
  for (const file of fs.readdirSync(domain, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    const src = fs.readFileSync(path.join(domain, file), 'utf8');
    for (const m of src.matchAll(/from\s+['"]([^'"]+)['"]/g)) {
      const inside = m[1].startsWith('.') && !path.relative(domain, path.resolve(domain, path.dirname(file), m[1])).startsWith('..');
      if (!inside) problems.push(`${file}: ${m[1]}`);
    }
  }
  assert.deepEqual(problems, []);
});
