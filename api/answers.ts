// Answer-schema pieces many operations share, written with literal types so each answer's type
// follows from its schema (AnswerOf in api/operation.ts).

/**
 * A deletion's acknowledgement: `deleted: true` beside the fields that name what went (none, or
 * e.g. `{ id: { type: 'integer' }, uid: { type: 'string' } }`).
 */
export function deletedSchema<const N extends Record<string, { readonly type: 'integer' | 'string' }> = Record<never, never>>(names?: N) {
  const named = (names ?? {}) as N;
  return {
    type: 'object',
    required: [...(Object.keys(named) as (keyof N & string)[]), 'deleted'],
    properties: { ...named, deleted: { const: true } } as N & { deleted: { const: true } },
  } as const;
}

/** A plain list of one item schema (the operator API's capped lists). */
export const listSchema = <const S>(items: S) => ({ type: 'array', items }) as const;
