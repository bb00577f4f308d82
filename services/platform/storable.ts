// What the service can store from a free-form JSON value (custom contact fields, automation config
// and input, bodies an operation ignores), stated as a schema so the OpenAPI document admits exactly
// what the server accepts: text without NUL or unpaired surrogates (withStorageBounds adds the
// pattern), finite numbers, booleans, null, and arrays and objects of those, nested at most
// STORABLE_DEPTH levels. Not recursive ($ref), so every door and generator reads it as it is.

/** Levels of arrays and objects a free-form value may nest (JSON nested deeper is refused). */
export const STORABLE_DEPTH = 4;

const scalar = { type: ['string', 'number', 'boolean', 'null'] } as const;

function storable(depth: number): Record<string, unknown> {
  if (depth === 0) return scalar;
  const inner = storable(depth - 1);
  return { anyOf: [scalar, { type: 'array', items: inner }, { type: 'object', additionalProperties: inner }] };
}

/** A free-form value: scalars, or arrays and objects of them up to STORABLE_DEPTH levels. */
export const storableValue = storable(STORABLE_DEPTH);

/** A free-form object: any keys (no NUL), storable values. */
export const storableObject = { type: 'object', additionalProperties: storable(STORABLE_DEPTH - 1) } as const;

/** The body (or query) of an operation that takes no input: anything storable is accepted and ignored. */
export const noInput = { type: 'object', properties: {}, additionalProperties: storable(STORABLE_DEPTH - 1) } as const;
