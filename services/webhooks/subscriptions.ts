import type { EntityManager } from '@mikro-orm/postgresql';

// What the webhook deliveries need of the family whose subscriptions they also carry (automations:
// business events to a subscription's URL). The worker wires it (activities/index.ts), so webhooks
// imports nothing of that family's and the two do not reach each other in a circle.

/** One signed request, ready to post. */
export interface SignedRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
}

export interface SubscriptionDeliveries {
  /** The signed request for one event to one subscription, or why nothing is sent (deleted, inactive, no such event). */
  request(em: EntityManager, accountId: number, subscriptionId: number, eventId: string, now: Date): Promise<SignedRequest | string>;
  /** Tells the account that an endpoint was disabled (its business-event log), in the transaction that disabled it. */
  endpointDisabled(
    tx: EntityManager,
    accountId: number,
    fields: { endpoint_id: number; url: string; reason: string; last_error: string | null },
  ): Promise<void>;
}
