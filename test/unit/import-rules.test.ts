import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

// The import rules of docs/architecture.md as a table. Each rule names what it forbids and carries
// an example edge it must refuse, so a rule that silently stopped matching fails here too.

const root = path.resolve(import.meta.dirname, '../..');

/** The families of the contract: the same name in every layer that has one. */
export const FAMILIES = [
  'account',
  'messaging',
  'contacts',
  'campaigns',
  'automations',
  'webhooks',
  'groups',
  'catalogues',
  'orders',
  'shop',
  'data',
  'payments',
  'agents',
  'leads',
  'templates',
  'forms',
  'flows',
  'posts',
  'occasions',
  // The MCP authorization server: its stored objects, people's passwords and invitations.
  'oauth',
] as const;
const FAMILY_LAYERS = ['api', 'services', 'domain', 'workflows', 'activities'];

interface Edge {
  /** Importing file, relative to the project root with / separators. */
  from: string;
  /** Resolved project-relative target for relative specifiers, else the bare package name. */
  to: string;
  /** Whether the target is one of our files (true) or a package / Node built-in (false). */
  local: boolean;
  typeOnly: boolean;
}

const layerOf = (p: string) => p.split('/')[0];
/** `services/contacts/contacts.ts` → contacts; `entities/contacts.ts` → contacts; platform folders → null. */
function familyOf(p: string): string | null {
  const parts = p.split('/');
  if (parts[0] === 'entities') {
    const name = parts[1]?.replace(/\.ts$/, '');
    return (FAMILIES as readonly string[]).includes(name) ? name : null;
  }
  if (!FAMILY_LAYERS.includes(parts[0]) || parts.length < 3) return null;
  return (FAMILIES as readonly string[]).includes(parts[1]) ? parts[1] : null;
}
const isIndex = (p: string) => /^[a-z]+\/[a-z-]+\/index\.ts$/.test(p) || /^entities\/[a-z-]+\.ts$/.test(p);
const isBuiltin = (spec: string) => spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]);

interface Rule {
  name: string;
  /** A message when the edge breaks the rule. */
  check(e: Edge): string | null;
  /** An edge the rule must refuse. */
  failing: Edge;
}

const local = (from: string, to: string, typeOnly = false): Edge => ({ from, to, local: true, typeOnly });
const pkg = (from: string, to: string, typeOnly = false): Edge => ({ from, to, local: false, typeOnly });

/** The provider layer's doors: the ports (types) and the registry that picks an adapter by name. */
const PROVIDER_DOORS = ['providers/index.ts', 'providers/types.ts'];
/** Files that still name an adapter until chat groups get their own port (issue 24, point 4); must end empty. */
const PROVIDERS_PENDING = new Set<string>([]);

export const RULES: Rule[] = [
  {
    name: 'workflows import only the workflow SDK, pure domain code, other workflows and activity types',
    check: (e) => {
      if (layerOf(e.from) !== 'workflows') return null;
      if (!e.local) return e.to === '@temporalio/workflow' ? null : `package ${e.to}`;
      const l = layerOf(e.to);
      if (l === 'domain' || l === 'workflows') return null;
      if (l === 'activities' && e.typeOnly) return null;
      return `${e.to}${l === 'activities' ? ' by value' : ''}`;
    },
    failing: local('workflows/campaigns/campaign.ts', 'activities/campaigns/campaign.ts'),
  },
  {
    name: 'domain code is pure: it imports only domain code (no packages, no I/O)',
    check: (e) => (layerOf(e.from) === 'domain' && (!e.local || layerOf(e.to) !== 'domain') ? e.to : null),
    failing: pkg('domain/messaging/recipients.ts', 'pg'),
  },
  {
    name: 'entities import only entities, domain code and packages',
    check: (e) => (layerOf(e.from) === 'entities' && e.local && !['entities', 'domain'].includes(layerOf(e.to)) ? e.to : null),
    failing: local('entities/contacts.ts', 'services/contacts/index.ts'),
  },
  {
    name: 'nothing below the doors imports api/',
    check: (e) =>
      layerOf(e.from) !== 'api' &&
      ['services', 'activities', 'workflows', 'worker', 'domain', 'entities', 'temporal'].includes(layerOf(e.from)) &&
      e.local &&
      layerOf(e.to) === 'api'
        ? e.to
        : null,
    failing: local('activities/messaging/dispatch.ts', 'api/http/errors.ts'),
  },
  {
    name: 'services start workflows only through typed starters: no workflow module by value',
    check: (e) =>
      layerOf(e.from) === 'services' && e.local && layerOf(e.to) === 'workflows' && !e.typeOnly && !/\.starter\.ts$/.test(e.to)
        ? e.to
        : null,
    failing: local('services/campaigns/campaigns.ts', 'workflows/campaigns/campaign.ts'),
  },
  {
    name: 'the doors reach activities and workflows only through services',
    check: (e) =>
      layerOf(e.from) === 'api' && e.local && ['activities', 'workflows'].includes(layerOf(e.to)) && !e.typeOnly ? e.to : null,
    failing: local('api/messaging/dispatch.ts', 'activities/messaging/dispatch.ts'),
  },
  {
    name: 'a provider is named only inside providers/: everything else uses the ports and the registry (providers/index.ts)',
    check: (e) =>
      e.local &&
      layerOf(e.to) === 'providers' &&
      layerOf(e.from) !== 'providers' &&
      !PROVIDER_DOORS.includes(e.to) &&
      !PROVIDERS_PENDING.has(e.from)
        ? e.to
        : null,
    failing: local('services/messaging/whatsapp.ts', 'providers/whatsapp-cloud/payload.ts'),
  },
  {
    name: 'the doors hold no SQL: entities/db.ts (the raw-statement door) is for services and activities',
    check: (e) => (layerOf(e.from) === 'api' && e.local && e.to === 'entities/db.ts' ? e.to : null),
    failing: local('api/http/auth.ts', 'entities/db.ts'),
  },
  {
    name: 'the simulator imports nothing from the application',
    check: (e) => (layerOf(e.from) === 'simulator' && e.local && layerOf(e.to) !== 'simulator' ? e.to : null),
    failing: local('simulator/signing.ts', 'services/webhooks/signing.ts'),
  },
  {
    name: "a family reaches another family only through that family's index",
    check: (e) => {
      if (!e.local) return null;
      const a = familyOf(e.from);
      const b = familyOf(e.to);
      return a && b && a !== b && !isIndex(e.to) ? `${e.to} (use ${layerOf(e.to)}/${b}/index.ts)` : null;
    },
    failing: local('services/campaigns/campaign-audience.ts', 'services/contacts/contacts.ts'),
  },
];

/** The layers whose family edges must not go round in a circle: everything below the doors (api/ wires families together). */
const ACYCLIC_LAYERS = ['services', 'domain', 'entities', 'activities', 'workflows'];

/** Family → the families its files (below the doors) import, with one example edge each. */
export function familyGraph(edges: Edge[]): Map<string, Map<string, Edge>> {
  const graph = new Map<string, Map<string, Edge>>();
  for (const e of edges) {
    if (!e.local || !ACYCLIC_LAYERS.includes(layerOf(e.from))) continue;
    const a = familyOf(e.from);
    const b = familyOf(e.to);
    if (!a || !b || a === b) continue;
    if (!graph.has(a)) graph.set(a, new Map());
    if (!graph.get(a)!.has(b)) graph.get(a)!.set(b, e);
  }
  return graph;
}

/** One cycle through the family graph as its edges (each with an example import), or null when there is none. */
export function familyCycle(graph: Map<string, Map<string, Edge>>): Edge[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: Edge[] = [];
  const visit = (family: string): Edge[] | null => {
    state.set(family, 'open');
    for (const [next, edge] of graph.get(family) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.findIndex((p) => familyOf(p.from) === next)), edge];
      if (state.has(next)) continue;
      path.push(edge);
      const found = visit(next);
      if (found) return found;
      path.pop();
    }
    state.set(family, 'done');
    return null;
  };
  for (const family of [...graph.keys()].sort()) {
    if (state.has(family)) continue;
    const found = visit(family);
    if (found) return found;
  }
  return null;
}

/** Every static and dynamic import of a source file, with whether it is type-only. */
export function importsOf(file: string, src: string): Edge[] {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: Edge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (spec.startsWith('.')) {
      const abs = path.resolve(root, path.dirname(file), spec.replace(/\.js$/, '.ts'));
      edges.push({ from: file, to: path.relative(root, abs).split(path.sep).join('/'), local: true, typeOnly });
    } else {
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0];
      edges.push({ from: file, to: isBuiltin(spec) ? spec : name, local: false, typeOnly });
    }
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const c = node.importClause;
      const named = c?.namedBindings && ts.isNamedImports(c.namedBindings) ? c.namedBindings.elements : undefined;
      const typeOnly = !!c && (c.isTypeOnly || (!c.name && !!named && named.length > 0 && named.every((el) => el.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return edges;
}

const SCANNED = [
  'api',
  'services',
  'domain',
  'entities',
  'workflows',
  'activities',
  'providers',
  'worker',
  'temporal',
  'simulator',
  'observability',
];
function projectEdges(): Edge[] {
  const edges: Edge[] = [];
  for (const layer of SCANNED) {
    for (const f of fs.readdirSync(path.join(root, layer), { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      const file = `${layer}/${f.split(path.sep).join('/')}`;
      edges.push(...importsOf(file, fs.readFileSync(path.join(root, file), 'utf8')));
    }
  }
  return edges;
}

test('every import rule refuses its failing example', () => {
  for (const rule of RULES) assert.ok(rule.check(rule.failing), `rule "${rule.name}" did not refuse ${JSON.stringify(rule.failing)}`);
});

test('the import parser sees type-only, multi-line, re-export and dynamic imports', () => {
  const src = [
    "import type { A } from '../../activities/campaigns/campaign.js';",
    "import {\n  type B,\n  type C,\n} from '../../activities/webhooks/webhook-delivery.js';",
    "import { proxyActivities, type Duration } from '@temporalio/workflow';",
    "export * from '../../domain/campaigns/personalize.js';",
    "const m = await import('node:fs');",
  ].join('\n');
  const edges = importsOf('workflows/campaigns/campaign.ts', src).map((e) => `${e.to}:${e.typeOnly ? 'type' : 'value'}`);
  assert.deepEqual(edges, [
    'activities/campaigns/campaign.ts:type',
    'activities/webhooks/webhook-delivery.ts:type',
    '@temporalio/workflow:value',
    'domain/campaigns/personalize.ts:value',
    'node:fs:value',
  ]);
});

test('typical allowed edges pass every rule', () => {
  const allowed = [
    local('workflows/campaigns/campaign.ts', 'activities/campaigns/campaign.ts', true),
    local('workflows/campaigns/campaign.ts', 'domain/campaigns/personalize.ts'),
    pkg('workflows/campaigns/campaign.ts', '@temporalio/workflow'),
    local('services/campaigns/campaigns.ts', 'services/contacts/index.ts'),
    local('services/campaigns/campaigns.ts', 'entities/contacts.ts'),
    local('services/campaigns/campaigns.ts', 'services/platform/errors.ts'),
    local('activities/campaigns/campaign.ts', 'services/campaigns/campaigns.ts'),
    local('api/campaigns/campaigns.ts', 'services/campaigns/campaigns.ts'),
    local('simulator/app.ts', 'simulator/signing.ts'),
  ];
  for (const e of allowed) for (const rule of RULES) assert.equal(rule.check(e), null, `${rule.name} refused ${JSON.stringify(e)}`);
});

test('the code base keeps every import rule', () => {
  const problems: string[] = [];
  for (const e of projectEdges()) {
    for (const rule of RULES) {
      const why = rule.check(e);
      if (why) problems.push(`${rule.name}: ${e.from} → ${why}`);
    }
  }
  assert.equal(problems.length, 0, `import rules broken:\n${problems.join('\n')}`);
});

test('the families reach each other without a cycle (below the doors), and the check finds one', () => {
  const example = [
    local('services/messaging/chat-orders.ts', 'services/orders/index.ts'),
    local('services/orders/orders.ts', 'services/catalogues/index.ts'),
    local('services/catalogues/product-sends.ts', 'services/messaging/index.ts'),
    local('api/http/ingress.ts', 'services/orders/index.ts'),
  ];
  assert.deepEqual(
    familyCycle(familyGraph(example))?.map((e) => `${familyOf(e.from)}→${familyOf(e.to)}`),
    ['catalogues→messaging', 'messaging→orders', 'orders→catalogues'],
  );
  assert.equal(familyCycle(familyGraph(example.slice(1))), null, 'an edge at the doors is no cycle');
  const cycle = familyCycle(familyGraph(projectEdges()));
  assert.equal(cycle, null, `a cycle between families: ${cycle?.map((e) => `${e.from} → ${e.to}`).join(', then ')}`);
});

test('nothing outside api/ imports from api/', () => {
  const problems = projectEdges().filter((e) => layerOf(e.from) !== 'api' && e.local && layerOf(e.to) === 'api');
  assert.deepEqual(problems, []);
});
