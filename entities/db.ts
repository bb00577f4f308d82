import { CompiledQuery } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';

// Thin helpers over the EntityManager's connection for the queries that are hot or set-based
// (send path, receipts, rate limits), where building entities would only add cost.
// Placeholders are `?`, as in every MikroORM raw query.
export async function many<T>(em: EntityManager, query: string, params: unknown[] = []): Promise<T[]> {
  return (await em.execute(query, params, 'all')) as T[];
}

export async function one<T>(em: EntityManager, query: string, params: unknown[] = []): Promise<T | null> {
  const rows = await many<T>(em, query, params);
  return rows[0] ?? null;
}

/**
 * Like `many`, but the parameters travel as bind parameters ($1, $2, ...) instead of being written
 * into the SQL text. MikroORM's raw queries inline every value as an escaped literal; for the
 * set-based statements that carry a JSON document of hundreds of rows (status moves, a campaign
 * page) that meant escaping it here and lexing it there on every call. Each `?` is a parameter,
 * so the SQL must hold no other question mark, and a value is passed as is (no array expansion).
 * Runs in the EntityManager's transaction when there is one.
 */
export async function manyBound<T>(em: EntityManager, query: string, params: unknown[]): Promise<T[]> {
  let n = 0;
  const text = query.replace(/\?/g, () => `$${++n}`);
  if (n !== params.length) throw new Error(`manyBound: ${n} placeholders for ${params.length} parameters`);
  const res = await em.getKysely().executeQuery(CompiledQuery.raw(text, params));
  return res.rows as T[];
}
