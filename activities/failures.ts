import { ApplicationFailure } from '@temporalio/activity';
import { DomainError, describeDomainError } from '../services/platform/errors.js';

// The activity door of the domain errors, mapped once for every activity: a refusal of the work
// itself (unknown sender, invalid number, a missing record the caller named) will not change on a
// retry, so it becomes a non-retryable failure typed `DomainError.<kind>` carrying the field
// problems; anything else is left to the activity's retry policy.

export function toActivityFailure(err: DomainError): ApplicationFailure {
  return ApplicationFailure.nonRetryable(describeDomainError(err), `DomainError.${err.kind}`, {
    kind: err.kind,
    ...(err.detail.errors ? { errors: err.detail.errors } : {}),
    ...(err.detail.reason ? { reason: err.detail.reason } : {}),
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- activities take and return anything serialisable
type AnyActivity = (...args: any[]) => Promise<unknown>;

/** The same activities, each mapping a DomainError it throws to a non-retryable failure. */
export function mapDomainErrors<T extends Record<string, AnyActivity>>(activities: T): T {
  const mapped: Record<string, AnyActivity> = {};
  for (const [name, fn] of Object.entries(activities)) {
    mapped[name] = async (...args) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw err instanceof DomainError ? toActivityFailure(err) : err;
      }
    };
    // Temporal registers activities by their property names; keep the function names for stack traces too.
    Object.defineProperty(mapped[name], 'name', { value: name });
  }
  return mapped as T;
}
