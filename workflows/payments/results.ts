import { setHandler, type SignalDefinition } from '@temporalio/workflow';

/** What a payment or refund workflow keeps of the provider results it was signalled. */
export interface ResultsSeen {
  /** Result events seen (ids), so a replayed or late callback changes nothing twice. */
  seen: string[];
  duplicates: number;
}

/**
 * Takes `signal`'s provider results into the answered inbox, each event once: the ingress forwards
 * every verified callback, and the provider sends some twice (a retry, a replay), so a repeated
 * event id only counts as a duplicate in the workflow's state.
 */
export function resultInbox<R extends { eventId: string }>(s: ResultsSeen, signal: SignalDefinition<[R]>): R[] {
  const inbox: R[] = [];
  setHandler(signal, (r) => {
    if (s.seen.includes(r.eventId)) {
      s.duplicates++;
      return;
    }
    s.seen.push(r.eventId);
    inbox.push(r);
  });
  return inbox;
}
