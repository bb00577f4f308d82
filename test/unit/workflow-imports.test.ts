import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Workflow code runs in Temporal's deterministic sandbox: it may import only the workflow SDK,
// pure domain code and activity *types*. This is the project's lint rule for workflow files.
// Starters live beside the workflows but never enter the bundle: a starter declaration
// (`*.starter.ts`) is pure data with type-only imports from workflows/, `workflows/starter.ts`
// holds only their types, and no workflow imports either.
const dir = path.resolve(import.meta.dirname, '../../workflows');

const isStarterDeclaration = (file: string) => file.endsWith('.starter.ts');
const isStarterTypes = (file: string) => file === 'starter.ts';
const isStarterModule = (file: string) => isStarterDeclaration(file) || isStarterTypes(file);

/** What is wrong with the imports of `file` (relative to workflows/), given its source. */
function problemsOf(file: string, src: string): string[] {
  const problems: string[] = [];
  for (const m of src.matchAll(/^\s*(import|export)\s+(type\s+)?[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
    const [, , typeOnly, spec] = m;
    const target = spec.startsWith('.') ? path.relative(dir, path.resolve(dir, path.dirname(file), spec)).replace(/\.js$/, '.ts') : null;
    const layer = target === null ? null : target.startsWith('..') ? target.split(path.sep)[1] : 'workflows';
    const inWorkflows = layer === 'workflows';
    let ok: boolean;
    if (isStarterDeclaration(file)) ok = !!typeOnly && inWorkflows;
    else if (isStarterTypes(file)) ok = !!typeOnly && (spec === '@temporalio/workflow' || target === 'index.ts');
    else
      ok =
        spec === '@temporalio/workflow' ||
        layer === 'domain' ||
        (inWorkflows && !isStarterModule(target!)) ||
        (!!typeOnly && layer === 'activities');
    if (!ok) problems.push(`${file}: ${m[0].trim()}`);
  }
  if (/\brequire\(|import\(/.test(src)) problems.push(`${file}: dynamic import or require`);
  return problems;
}

test('workflow files import only @temporalio/workflow, domain code, other workflows and activity types', () => {
  const problems: string[] = [];
  for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))) {
    problems.push(...problemsOf(file, fs.readFileSync(path.join(dir, file), 'utf8')));
  }
  assert.deepEqual(problems, []);
});

test('starter files are allowed type-only imports from workflows/ and nothing else; workflows never import starters', () => {
  const refused: Array<[string, string]> = [
    ['campaigns/campaign.starter.ts', "import { Client } from '@temporalio/client';"],
    ['campaigns/campaign.starter.ts', "import type { Client } from '@temporalio/client';"],
    ['campaigns/campaign.starter.ts', "import { campaignWorkflow } from './campaign.js';"],
    ['campaigns/campaign.starter.ts', "import { AccountId } from '../../temporal/search-attributes.js';"],
    ['campaigns/campaign.starter.ts', "import type { Config } from '../../config.js';"],
    ['campaigns/campaign.starter.ts', "import crypto from 'node:crypto';"],
    ['starter.ts', "import type { Client } from '@temporalio/client';"],
    ['starter.ts', "import { proxyActivities } from '@temporalio/workflow';"],
    ['campaigns/campaign.ts', "import { campaignStarter } from './campaign.starter.js';"],
    ['campaigns/campaign.ts', "import type { WorkflowStarter } from '../starter.js';"],
  ];
  for (const [file, src] of refused) assert.equal(problemsOf(file, src).length, 1, `${file} must refuse: ${src}`);
  const allowed: Array<[string, string]> = [
    ['campaigns/campaign.starter.ts', "import type { WorkflowStarter } from '../starter.js';"],
    ['messaging/message.starter.ts', "import type { firstOutcomeUpdate } from './message.js';"],
    ['starter.ts', "import type { WorkflowIdConflictPolicy } from '@temporalio/workflow';"],
    ['starter.ts', "import type * as workflows from './index.js';"],
  ];
  for (const [file, src] of allowed) assert.deepEqual(problemsOf(file, src), [], `${file} must allow: ${src}`);
});

test('workflows/index.ts exports only workflows, and each has a starter declared beside it', async () => {
  const exported = await import('../../workflows/index.js');
  for (const [name, value] of Object.entries(exported)) {
    assert.equal(typeof value, 'function', `${name} is a workflow function`);
    assert.match(name, /Workflow$/, `${name} is named as a workflow`);
  }
  const declared = new Set<string>();
  for (const file of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter(isStarterDeclaration)) {
    const mod: Record<string, unknown> = await import(pathToFileURL(path.join(dir, file)).href);
    for (const v of Object.values(mod)) {
      if (v && typeof v === 'object' && 'workflowType' in v) declared.add(String(v.workflowType));
    }
  }
  assert.deepEqual([...declared].sort(), Object.keys(exported).sort());
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
