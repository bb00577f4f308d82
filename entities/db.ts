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
