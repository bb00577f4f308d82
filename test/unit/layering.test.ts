import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

// The HTTP edge depends on the services, never the other way round: REST handlers and MCP tools
// call the same services, so nothing below api/ may need the edge (DESIGN.md).
const root = path.resolve(import.meta.dirname, '../..');
const LAYERS = ['services', 'activities', 'workflows', 'worker', 'domain', 'entities', 'temporal'];

test('nothing outside api/ imports from api/', () => {
  const problems: string[] = [];
  for (const layer of LAYERS) {
    for (const file of fs.readdirSync(path.join(root, layer), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
      const src = fs.readFileSync(path.join(root, layer, file), 'utf8');
      for (const m of src.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
        const target = path.relative(root, path.resolve(path.dirname(path.join(root, layer, file)), m[1]));
        if (m[1].startsWith('.') && target.split(path.sep)[0] === 'api') problems.push(`${layer}/${file}: ${m[1]}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});
