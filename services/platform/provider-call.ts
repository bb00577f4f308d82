import { ApplicationFailure, WorkflowFailedError } from '@temporalio/client';
import { DomainError } from './errors.js';

/** What the caller says when the provider refused (followed by the provider's words) or could not be reached. */
export interface ProviderCallWords {
  refused: string;
  unreachable: string;
}

/**
 * Waits up to `waitMs` for a workflow that makes one provider call on a request's behalf: its result,
 * or null while it still runs (it carries on, durable; the caller answers that the change is under
 * way). A refusal by the provider (ProviderRefused in the cause chain) is a 502 with the provider's
 * words; a workflow that failed otherwise is a 502 saying the provider could not be reached.
 */
export async function providerCallWithin<T>(handle: { result(): Promise<T> }, waitMs: number, words: ProviderCallWords): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), waitMs);
  });
  const result = handle.result();
  // Still awaited below; this only keeps a failure after the wait from being an unhandled rejection.
  result.catch(() => undefined);
  try {
    return await Promise.race([result, late]);
  } catch (err) {
    const refused = providerRefusal(err);
    if (refused !== undefined)
      throw new DomainError('provider_failure', `${words.refused}${refused ? `: ${refused}` : '.'}`, { reason: 'provider_refused' });
    if (err instanceof WorkflowFailedError) throw new DomainError('provider_failure', words.unreachable, { reason: 'provider_failed' });
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

/** The provider's words when a workflow failed because the provider refused (ProviderRefused in the cause chain). */
function providerRefusal(err: unknown): string | undefined {
  for (let e = err as Error | undefined, i = 0; e && i < 8; e = e.cause as Error | undefined, i++) {
    if (e instanceof ApplicationFailure && e.type === 'ProviderRefused') return e.message ?? '';
  }
  return undefined;
}
