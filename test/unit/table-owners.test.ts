import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { EntitySchema } from '@mikro-orm/core';

// Each family owns its tables (docs/architecture.md "Tables each family owns"): only its store,
// services/<family>/store.ts or services/<family>/store/*.ts, names them in SQL text or in a Kysely
// builder call, and only that store asks tablesOf(em, '<family>'). Another family reads through the
// owner's index. The owner of each table is the entity file that declares it.

const root = path.resolve(import.meta.dirname, '../..');
const SCANNED = ['api', 'services', 'domain', 'workflows', 'activities', 'providers', 'worker', 'temporal', 'observability'];

/** Files of entities/ that are machinery, not a family's tables (index.ts re-exports them all). */
const NOT_FAMILIES = ['index.ts', 'db.ts', 'orm.ts', 'columns.ts', 'database.ts'];

/** table name → owning family, read from the entities each family file declares (and the hand-kept platform table). */
export async function tableOwners(): Promise<Map<string, string>> {
  const owners = new Map<string, string>([['rate_limit_windows', 'platform']]);
  for (const f of fs.readdirSync(path.join(root, 'entities'))) {
    if (!f.endsWith('.ts') || NOT_FAMILIES.includes(f)) continue;
    const family = (await import(path.join(root, 'entities', f))) as Record<string, unknown>;
    for (const v of Object.values(family)) if (v instanceof EntitySchema) owners.set(v.meta.tableName, f.replace(/\.ts$/, ''));
  }
  return owners;
}

const isStoreOf = (file: string, family: string) => file === `services/${family}/store.ts` || file.startsWith(`services/${family}/store/`);

const BUILDER_CALLS = new Set([
  'selectFrom',
  'insertInto',
  'updateTable',
  'deleteFrom',
  'mergeInto',
  'innerJoin',
  'leftJoin',
  'rightJoin',
  'fullJoin',
]);
const SQL_NAMES = /\b(?:from|join|into|update|table|exists)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?/gi;

/** Each table named in a file's SQL text or builder calls, and each family whose tables it asks for. */
export function tablesNamed(file: string, src: string): { tables: Set<string>; families: Set<string> } {
  const sf = ts.createSourceFile(file, src, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const tables = new Set<string>();
  const families = new Set<string>();
  const text = (t: string) => {
    for (const m of t.matchAll(SQL_NAMES)) tables.add(m[1].toLowerCase());
  };
  const visit = (node: ts.Node) => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) text(node.text);
    else if (ts.isTemplateExpression(node)) {
      text(node.head.text);
      for (const span of node.templateSpans) text(span.literal.text);
    }
    if (ts.isCallExpression(node) && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee) ? callee.name.text : ts.isIdentifier(callee) ? callee.text : '';
      if (BUILDER_CALLS.has(name)) tables.add(node.arguments[0].text.split(/\s+as\s+|\s+/)[0]);
      if (name === 'tablesOf' && node.arguments[1] && ts.isStringLiteral(node.arguments[1])) families.add(node.arguments[1].text);
    }
    if (ts.isCallExpression(node) && node.arguments[1] && ts.isStringLiteral(node.arguments[1])) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && callee.text === 'tablesOf') families.add(node.arguments[1].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { tables, families };
}

/** What a file breaks: another family's table named, or another family's tables asked for. */
export function ownershipProblems(file: string, src: string, owners: Map<string, string>): string[] {
  const { tables, families } = tablesNamed(file, src);
  const problems: string[] = [];
  for (const t of tables) {
    const owner = owners.get(t);
    if (!owner || isStoreOf(file, owner)) continue;
    const own = file.split('/')[1] === owner;
    problems.push(
      `${file} names ${t} (${own ? `move the statement into services/${owner}/store` : `owned by ${owner}: ask services/${owner}/index.ts`})`,
    );
  }
  for (const f of families) if (!isStoreOf(file, f)) problems.push(`${file} asks tablesOf(em, '${f}') outside services/${f}/store`);
  return problems;
}

test('the ownership rule refuses another family naming a table, in SQL text and in a builder call', async () => {
  const owners = await tableOwners();
  assert.equal(owners.get('products'), 'catalogues');
  assert.equal(owners.get('messages'), 'messaging');
  assert.equal(owners.get('product_variants'), 'catalogues');
  const sqlText = "const r = await many(em, 'select p.id from products p join catalogues c on c.id = p.catalogue_id');";
  assert.deepEqual(ownershipProblems('services/shop/basket.ts', sqlText, owners).length, 2);
  const builder = "await db.selectFrom('conversation_windows as w').select('w.id').execute();";
  assert.equal(ownershipProblems('services/shop/links.ts', builder, owners).length, 1);
  const asked = "const db = tablesOf(em, 'catalogues');";
  assert.equal(ownershipProblems('services/orders/store.ts', asked, owners).length, 1);
  // The owner's store may.
  assert.deepEqual(ownershipProblems('services/catalogues/store/products.ts', sqlText, owners), []);
  assert.deepEqual(ownershipProblems('services/catalogues/store.ts', asked, owners), []);
  // Prose that is not SQL naming a table is not a match: the words must be a SQL clause.
  assert.deepEqual(ownershipProblems('services/shop/basket.ts', "const m = 'the products of a catalogue';", owners), []);
});

test('every table is named only in its owner family store', async () => {
  const owners = await tableOwners();
  const problems: string[] = [];
  for (const layer of SCANNED) {
    const dir = path.join(root, layer);
    if (!fs.existsSync(dir)) continue;
    for (const f of fs.readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!f.endsWith('.ts')) continue;
      const file = `${layer}/${f.split(path.sep).join('/')}`;
      problems.push(...ownershipProblems(file, fs.readFileSync(path.join(dir, f), 'utf8'), owners));
    }
  }
  assert.deepEqual(problems, [], `tables named outside their owner's store:\n${problems.join('\n')}`);
});
