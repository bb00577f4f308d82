import type { RouteDef } from './registry.js';

/**
 * Every refusal status a route can answer, derived from what the door does with it, so each
 * operation documents its own (in whichever OpenAPI document lists it) and a new operation cannot
 * forget one:
 * - a JSON body is read, parsed and validated: 400 (not JSON, nested too deep, not an object), 413
 *   (over the limit), 415 (not JSON), 422 (schema, unstorable text, values beyond their column);
 * - a query string: 422; path parameters: 400 (unstorable text) and 404 (names nothing of the caller);
 * - account keys: 401, 403 (suspended account, missing issuer permission), 429; the operator token:
 *   401 and 429 (failed attempts are throttled); provider callbacks: 400 (malformed), 403 (signature);
 * - statuses a service decides for this operation alone (409, 402, …) from the route's `refusals`.
 */
export function refusalsOf(r: RouteDef): Record<number, string> {
  const out: Record<number, string> = {};
  const hasParams = r.path.includes('{');
  if (r.auth === 'rest') {
    out[401] = 'Missing, unknown, revoked, expired or wrong-kind credential';
    out[403] = 'Suspended account or missing issuer permission';
    out[429] = 'Rate limited (per token; failed authentication per client)';
  } else if (r.auth === 'operator') {
    out[401] = 'Missing or wrong operator token';
    out[429] = 'Too many failed operator authentications from this client';
  } else if (r.auth === 'provider') {
    out[400] = 'Malformed callback';
    out[403] = 'Signature verification failed';
    out[413] = 'Request body too large';
  }
  if (r.body) {
    out[400] = 'The body is not JSON, nests too deep, or is not a JSON object';
    out[413] = 'Request body too large';
    out[415] = 'The body is not application/json';
    out[422] = 'Validation failed (field errors by name)';
  }
  // Every query string is checked (unstorable text at least), whether or not it declares fields.
  if (r.query) out[422] = 'Validation failed (field errors by name)';
  if (hasParams) {
    out[400] ??= 'A path parameter holds a NUL character or an unpaired surrogate';
    out[404] = 'Not found (or not the caller’s)';
  }
  return { ...out, ...r.refusals };
}
