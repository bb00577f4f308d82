import type { ValidateFunction } from 'ajv';
import { makeAjv } from '../../services/platform/validation.js';
import type { JsonSchema } from './validation.js';
import { HttpError } from './errors.js';

// The output half of "each operation is written once": with CHECK_ANSWERS=true (the test suite) each
// REST answer is held to its operation's output schema, as the wire carries it (after JSON), so a
// handler that drifts from its schema fails the test that made the request instead of misleading
// the OpenAPI document's readers.

const ajv = makeAjv({ allErrors: true, strict: false });

/** A checker for one operation's answers; compiled at the first answer, not at start-up. */
export function answerCheck(operation: string, schema: JsonSchema): (data: unknown) => void {
  let validate: ValidateFunction | undefined;
  return (data) => {
    validate ??= ajv.compile(schema);
    const wire: unknown = data === undefined ? undefined : JSON.parse(JSON.stringify(data));
    if (validate(wire)) return;
    const where = (validate.errors ?? [])
      .slice(0, 5)
      .map(
        (e) =>
          `${e.instancePath || '/'} ${e.message ?? e.keyword}${e.params && 'additionalProperty' in e.params ? ` (${String(e.params.additionalProperty)})` : ''}`,
      )
      .join('; ');
    throw new HttpError(500, `${operation} answered outside its output schema: ${where}`);
  };
}
