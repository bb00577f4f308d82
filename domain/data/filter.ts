import { DATA_LIMITS, OPERATORS, SYSTEM_COLUMNS, TYPE_INFO, type FieldType, type Operator, type SystemColumnKey } from './vocabulary.js';
import { parseDatetime } from './values.js';

// The records list's condition tree (Endpoints > Data tables, Condition tree): read from the
// request's JSON, checked against the table's columns and turned into a typed tree whose values
// are already in their stored form. Nothing here writes SQL; the records query compiles the tree
// with every value as a bound parameter. A request that breaks the tree's grammar, names a column
// the table does not have, an operator outside the ten or a value of the wrong type is malformed
// (422); one of the ten that the column's type does not advertise is not supported (501).

/** A column a leaf may name: one of the table's, or a system column. */
export interface FilterColumn {
  key: string;
  type: FieldType;
  /** Set for $id, $created_at, $updated_at and $source (they are row columns, not keys of data). */
  system: SystemColumnKey | null;
}

/** A leaf's value in stored form: numbers, booleans, text (dates and datetimes fixed-width UTC), or lists of them. */
export type FilterScalar = string | number | boolean;
export type FilterValue = FilterScalar | FilterScalar[] | null;

export interface FilterLeaf {
  kind: 'leaf';
  column: FilterColumn;
  op: Operator;
  /** between: [low, high]; in: the list; is_empty / is_not_empty: null. */
  value: FilterValue;
}
export interface FilterGroup {
  kind: 'all' | 'any';
  nodes: FilterNode[];
}
export type FilterNode = FilterLeaf | FilterGroup;

export interface FilterProblem {
  /** invalid: 422 validation_error; not_supported: 501 (an operator the column's type does not advertise). */
  kind: 'invalid' | 'not_supported';
  message: string;
  column?: string;
  op?: string;
}

export class FilterError extends Error {
  constructor(readonly problems: FilterProblem[]) {
    super(problems[0]?.message ?? 'The filter is invalid.');
    this.name = 'FilterError';
  }
  /** A malformed tree wins over an unsupported operator: the request must be readable before it can be served. */
  get kind(): 'invalid' | 'not_supported' {
    return this.problems.some((p) => p.kind === 'invalid') ? 'invalid' : 'not_supported';
  }
}

const MAX_IN = 100;
/** Leaves and groups together: 40 leaves need far fewer groups than this; empty groups are not a way around the limit. */
const MAX_NODES = DATA_LIMITS.filterLeaves * 4;
const MAX_TEXT = DATA_LIMITS.textMax;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The columns a filter may name on a table: its own (by key) and the four system columns. */
export function filterColumns(columns: readonly { key: string; type: FieldType }[]): Map<string, FilterColumn> {
  const out = new Map<string, FilterColumn>();
  for (const c of columns) out.set(c.key, { key: c.key, type: c.type, system: null });
  for (const s of SYSTEM_COLUMNS) out.set(s.key, { key: s.key, type: s.type, system: s.key });
  return out;
}

/** The operators a column advertises (the system columns have their own, narrower lists). */
export function operatorsOf(column: FilterColumn): readonly Operator[] {
  if (column.system) return SYSTEM_COLUMNS.find((s) => s.key === column.system)!.operators;
  return TYPE_INFO[column.type].operators;
}

/**
 * The tree of a `filter` query value: undefined, '' and {} select everything (null). Throws
 * FilterError naming every problem found (a malformed tree first, then unsupported operators).
 */
export function parseFilter(raw: unknown, columns: readonly { key: string; type: FieldType }[]): FilterNode | null {
  let tree: unknown = raw;
  if (typeof raw === 'string') {
    if (!raw.trim()) return null;
    try {
      tree = JSON.parse(raw);
    } catch {
      throw new FilterError([{ kind: 'invalid', message: 'The filter must be a JSON condition tree.' }]);
    }
  }
  if (tree === undefined || tree === null) return null;
  if (isObject(tree) && !Object.keys(tree).length) return null;
  const ctx: Ctx = { columns: filterColumns(columns), problems: [], leaves: 0, nodes: 0 };
  const node = readNode(ctx, tree, 0, 'filter');
  if (ctx.leaves > DATA_LIMITS.filterLeaves)
    ctx.problems.unshift({ kind: 'invalid', message: `The filter may have at most ${DATA_LIMITS.filterLeaves} conditions.` });
  else if (ctx.nodes > MAX_NODES) ctx.problems.unshift({ kind: 'invalid', message: `The filter may have at most ${MAX_NODES} nodes.` });
  if (ctx.problems.length) throw new FilterError(ctx.problems);
  return node;
}

interface Ctx {
  columns: Map<string, FilterColumn>;
  problems: FilterProblem[];
  leaves: number;
  nodes: number;
}

const invalid = (ctx: Ctx, message: string, extra: Partial<FilterProblem> = {}) => {
  // The first problems say enough; a tree of thousands of bad nodes must not make an answer of thousands of lines.
  if (ctx.problems.length < 20) ctx.problems.push({ kind: 'invalid', message, ...extra });
  return null;
};

/** `groups` is how many all/any groups enclose this node; at most filterDepth groups nest. */
function readNode(ctx: Ctx, node: unknown, groups: number, at: string): FilterNode | null {
  // A tree past its limits is refused without reading the rest of it, however wide it is.
  if (++ctx.nodes > MAX_NODES || ctx.leaves > DATA_LIMITS.filterLeaves) return null;
  if (!isObject(node)) return invalid(ctx, `${at} must be a condition object ({column, op, value}, {all:[…]} or {any:[…]}).`);
  const keys = Object.keys(node);
  if ('all' in node || 'any' in node) {
    const kind = 'all' in node ? 'all' : 'any';
    if (keys.length !== 1) return invalid(ctx, `${at} must hold only "${kind}" (found ${describeKeys(keys)}).`);
    if (groups + 1 > DATA_LIMITS.filterDepth) return invalid(ctx, `The filter may nest at most ${DATA_LIMITS.filterDepth} groups deep.`);
    const list = node[kind];
    if (!Array.isArray(list)) return invalid(ctx, `${at}.${kind} must be an array of conditions.`);
    const nodes: FilterNode[] = [];
    list.forEach((child, i) => {
      const n = readNode(ctx, child, groups + 1, `${at}.${kind}[${i}]`);
      if (n) nodes.push(n);
    });
    return { kind, nodes };
  }
  ctx.leaves++;
  if (ctx.leaves > DATA_LIMITS.filterLeaves) return null;
  const extra = keys.filter((k) => k !== 'column' && k !== 'op' && k !== 'value');
  if (extra.length) return invalid(ctx, `${at} has unknown keys: ${describeKeys(extra)}.`);
  if (typeof node.column !== 'string' || !node.column) return invalid(ctx, `${at}.column must name a column.`);
  if (typeof node.op !== 'string' || !node.op) return invalid(ctx, `${at}.op must name an operator.`);
  const name = node.column;
  const column = ctx.columns.get(name);
  if (!column) return invalid(ctx, `${at}: the table has no column ${quote(name)}.`, { column: clip(name) });
  const op = node.op;
  if (!(OPERATORS as readonly string[]).includes(op))
    return invalid(ctx, `${at}: ${quote(op)} is not an operator (one of ${OPERATORS.join(', ')}).`, { column: name, op: clip(op) });
  if (!operatorsOf(column).includes(op as Operator)) {
    ctx.problems.push({
      kind: 'not_supported',
      message: `The ${op} operator is not supported on column ${name} (${column.type}); it supports ${operatorsOf(column).join(', ')}.`,
      column: name,
      op,
    });
    return null;
  }
  const v = readValue(column, op as Operator, node.value, 'value' in node);
  if (typeof v === 'object' && v !== null && 'problem' in v) return invalid(ctx, `${at}: ${v.problem}`, { column: name, op });
  return { kind: 'leaf', column, op: op as Operator, value: v };
}

const clip = (s: string) => (s.length > 64 ? `${s.slice(0, 64)}…` : s);
const quote = (s: string) => JSON.stringify(clip(s));
const describeKeys = (keys: string[]) =>
  keys
    .slice(0, 5)
    .map((k) => quote(k))
    .join(', ');

type Read = FilterValue | { problem: string };

function readValue(column: FilterColumn, op: Operator, value: unknown, present: boolean): Read {
  const name = column.key;
  if (op === 'is_empty' || op === 'is_not_empty') {
    if (present && value !== null) return { problem: `${op} takes no value.` };
    return null;
  }
  if (!present || value === undefined) return { problem: `${op} on ${name} needs a value.` };
  if (op === 'between') {
    if (!Array.isArray(value) || value.length !== 2) return { problem: `between on ${name} needs exactly two endpoints, [low, high].` };
    const a = readScalar(column, value[0]);
    const b = readScalar(column, value[1]);
    if (typeof a === 'object') return a;
    if (typeof b === 'object') return b;
    return [a, b];
  }
  if (op === 'in') {
    if (!Array.isArray(value) || !value.length || value.length > MAX_IN)
      return { problem: `in on ${name} needs a list of 1 to ${MAX_IN} values.` };
    const out: FilterScalar[] = [];
    for (const item of value) {
      const s = readScalar(column, item);
      if (typeof s === 'object') return s;
      out.push(s);
    }
    return out;
  }
  // multi_select contains one option; every other single-valued operator takes one value of the column's type.
  return readScalar(column, value);
}

/** One value in the column's stored form, or why it cannot be. */
function readScalar(column: FilterColumn, value: unknown): FilterScalar | { problem: string } {
  const name = column.key;
  const info = TYPE_INFO[column.type];
  if (column.system === '$id' || column.type === 'relation') {
    if (typeof value !== 'string' || !UUID.test(value)) return { problem: `${name} compares with record ids (UUIDs).` };
    return value.toLowerCase();
  }
  if (column.system === '$created_at' || column.system === '$updated_at' || column.type === 'datetime') {
    const t = typeof value === 'string' ? normalizeDatetime(value) : null;
    if (t === null) return { problem: `${name} compares with date-times carrying a timezone (2026-01-31T10:00:00Z).` };
    return t;
  }
  if (column.type === 'date') {
    if (typeof value !== 'string' || !validDate(value)) return { problem: `${name} compares with dates (YYYY-MM-DD).` };
    return value;
  }
  if (info.numeric) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return { problem: `${name} compares with numbers.` };
    return value;
  }
  if (column.type === 'boolean') {
    if (typeof value !== 'boolean') return { problem: `${name} compares with true or false.` };
    return value;
  }
  if (typeof value !== 'string') return { problem: `${name} compares with text.` };
  if (value.length > MAX_TEXT) return { problem: `a value for ${name} may not be longer than ${MAX_TEXT} characters.` };
  if (value.includes('\0')) return { problem: `a value for ${name} may not hold a NUL character.` };
  return value;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
function validYmd(y: number, m: number, d: number): boolean {
  if (y < 1 || m < 1 || m > 12 || d < 1) return false;
  return d <= [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];
}

export function validDate(s: string): boolean {
  const m = DATE.exec(s);
  return !!m && validYmd(+m[1], +m[2], +m[3]);
}

/**
 * A date-time with a timezone in the stored fixed-width UTC form (YYYY-MM-DDTHH:mm:ss.sssZ), or
 * null: one without a timezone is ambiguous, and one outside years 0001-9999 has no fixed-width form.
 * The same reading as a stored value's (parseDatetime), so a filter compares what a write stores.
 */
export function normalizeDatetime(s: string): string | null {
  return parseDatetime(s);
}

/** How many leaves a parsed tree holds (for logs and tests). */
export function countLeaves(node: FilterNode | null): number {
  if (!node) return 0;
  return node.kind === 'leaf' ? 1 : node.nodes.reduce((n, c) => n + countLeaves(c), 0);
}

/** The table columns a tree's leaves name (system columns left out), in the order they appear. */
export function leafColumns(node: FilterNode | null): string[] {
  if (!node) return [];
  if (node.kind === 'leaf') return node.column.system ? [] : [node.column.key];
  return node.nodes.flatMap(leafColumns);
}
