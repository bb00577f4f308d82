// The contract's page-number lists (messages, contacts, groups): one reading of page/per_page/limit
// and one pagination object, shared by every list.

export const paginationSchema = {
  type: 'object',
  required: ['current_page', 'per_page', 'last_page', 'total', 'has_more_pages'],
  properties: {
    current_page: { type: 'integer' },
    per_page: { type: 'integer' },
    last_page: { type: 'integer' },
    total: { type: 'integer' },
    has_more_pages: { type: 'boolean' },
  },
} as const;

/** The query properties every page-number list accepts (spread into each list's query schema). */
// Bounded so the offset stays a bigint: page 5e17 or 1e308 is a 422, not a failed statement.
export const pageQueryProperties = {
  page: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
  per_page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'default 20; above 100 reads as 100' },
  limit: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'wins over per_page; default 20; above 100 reads as 100' },
} as const;

/** Page-number lists: limit wins over per_page, default 20, at most 100. */
export function pageOf(q: { page?: number | string | null; per_page?: number | string | null; limit?: number | string | null }) {
  const asked = Number(q.limit ?? q.per_page ?? 20);
  const perPage = asked > 0 ? Math.min(100, Math.floor(asked)) : 20;
  const page = Number(q.page) > 0 ? Math.floor(Number(q.page)) : 1;
  return { page, perPage, offset: (page - 1) * perPage };
}

export function paginationOf(page: number, perPage: number, total: number) {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  return { current_page: page, per_page: perPage, last_page: lastPage, total, has_more_pages: page < lastPage };
}

/**
 * The answer schema of a page-number list: the resources under their contract key, and the one
 * pagination object. Literal types are kept, so the answer's type follows from the schema.
 */
export function pageSchema<const K extends string, const S>(key: K, items: S) {
  return {
    type: 'object',
    required: [key, 'pagination'],
    properties: { [key]: { type: 'array', items }, pagination: paginationSchema } as { [P in K]: { type: 'array'; items: S } } & {
      pagination: typeof paginationSchema;
    },
  } as const;
}

/** The answer of a page-number list: the resources under their contract key and the pagination object. */
export function pageAnswer<const K extends string, T>(key: K, items: T[], page: { page: number; perPage: number }, total: number) {
  return { [key]: items, pagination: paginationOf(page.page, page.perPage, total) } as { [P in K]: T[] } & {
    pagination: ReturnType<typeof paginationOf>;
  };
}
