import { createHash } from 'node:crypto';
import { CompiledQuery } from 'kysely';
import type { EntityManager, PostgreSqlConnection } from '@mikro-orm/postgresql';

// The one door for hand-written SQL (hot and set-based statements: send path, receipts, rate limits,
// where building entities would only add cost). Every value travels as a bind parameter ($1, $2, ...),
// never in the SQL text: MikroORM's `em.execute` writes values into the text as escaped literals,
// which is safe only as long as the escaping is, and costs escaping and lexing on large JSON documents.
//
// Placeholders are `?`, one per value, as in MikroORM raw queries. A `?` inside a quoted literal,
// a quoted identifier or a comment is left alone; the jsonb `?` operators cannot be told apart from
// placeholders, so use jsonb_exists() and friends instead. A value is passed as is: an array becomes
// a Postgres array (write `= any(?::bigint[])`, not `in (?)`), an object is sent as JSON text, a
// Date as a timestamp with its offset. Inside `em.transactional(...)` the statement runs on that
// transaction's connection (getKysely() returns the transaction when there is one).

/** `?` placeholders to `$n`, skipping quoted text and comments; returns the text and how many there were. */
export function numberPlaceholders(query: string): { text: string; count: number } {
  let out = '';
  let count = 0;
  for (let i = 0; i < query.length;) {
    const c = query[i];
    const skip =
      c === "'" || c === '"' || c === '-' || c === '/'
        ? /^(?:(['"])(?:[^'"]|(?!\1)['"]|\1\1)*\1|--[^\n]*|\/\*[\s\S]*?\*\/)/.exec(query.slice(i))
        : null;
    if (skip) {
      out += skip[0];
      i += skip[0].length;
    } else if (c === '?') {
      out += `$${++count}`;
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return { text: out, count };
}

export async function many<T>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T[]> {
  const res = await em.getKysely().executeQuery(compile(query, params));
  return res.rows as T[];
}

export async function one<T>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T | null> {
  const rows = await many<T>(em, query, params);
  return rows[0] ?? null;
}

/** A statement run for its effect; answers how many rows it changed. */
export async function exec(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<number> {
  const res = await em.getKysely().executeQuery(compile(query, params));
  return Number(res.numAffectedRows ?? 0);
}

/**
 * `many` for a hot statement run on its own (outside a transaction): sent as a named statement, so
 * each pooled connection parses and plans it once and keeps the plan, instead of on every call
 * (measured: 0.59 of the authentication statement's 0.77 ms was planning). The name is the text's
 * hash, so a statement whose text varies (by table shape) gets one per variant. Inside a transaction
 * the statement must run on the transaction's connection: plain `many` there. A connection pooler
 * in front of PostgreSQL must keep named statements per server connection (PgBouncer 1.21 or later
 * with max_prepared_statements set; docs/deploy.md).
 */
export async function manyPlanned<T>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T[]> {
  if (em.isInTransaction()) return many<T>(em, query, params);
  const named = namedStatement(query);
  if (named.count !== params.length) throw new Error(`SQL has ${named.count} placeholders for ${params.length} parameters`);
  const pool = await (em.getConnection() as PostgreSqlConnection).getNativeClient();
  const res = await pool.query<T & object>({ name: named.name, text: named.text, values: params.map(bindable) });
  return res.rows;
}

export async function onePlanned<T>(em: EntityManager, query: string, params: readonly unknown[] = []): Promise<T | null> {
  return (await manyPlanned<T>(em, query, params))[0] ?? null;
}

const NAMED_LIMIT = 500;
const named = new Map<string, { name: string; text: string; count: number }>();
function namedStatement(query: string) {
  let n = named.get(query);
  if (!n) {
    const { text, count } = numberPlaceholders(query);
    n = { name: `svc_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text, count };
    // Texts are built from a handful of shapes; the limit only guards against a caller that inlines values.
    if (named.size >= NAMED_LIMIT) named.clear();
    named.set(query, n);
  }
  return n;
}

/** Kept for the callers that used the binding path before every helper bound. */
export const manyBound = many;

function compile(query: string, params: readonly unknown[]): CompiledQuery {
  const { text, count } = numberPlaceholders(query);
  if (count !== params.length) throw new Error(`SQL has ${count} placeholders for ${params.length} parameters`);
  return CompiledQuery.raw(text, params.map(bindable));
}

/** undefined is not a value Postgres knows; everything else pg encodes itself. */
const bindable = (v: unknown) => (v === undefined ? null : v);
