// Timestamps in answers: ISO 8601 in UTC, whichever query produced them. Raw statements get
// PostgreSQL's own text form from the driver (`2026-11-24 15:55:21.31+00`, as MikroORM configures
// it), which is neither what the documents promise (`format: date-time`) nor what clients parse.

/** A stored timestamp as ISO 8601; absent stays null, so a column that cannot be null reads as a string. */
export function iso(d: Date | string): string;
export function iso(d: Date | string | null | undefined): string | null;
export function iso(d: Date | string | null | undefined): string | null {
  return d ? new Date(d).toISOString() : null;
}

/** A raw row with every `*_at` column as ISO 8601 (the naming every table here follows). */
export function withIsoTimestamps<T extends object>(row: T): T {
  const out = { ...row } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (k.endsWith('_at')) out[k] = v instanceof Date || typeof v === 'string' ? iso(v) : null;
  return out as T;
}
