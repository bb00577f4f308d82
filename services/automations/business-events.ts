import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { insertBusinessEvent, type BusinessEventRecord } from './store.js';

/**
 * Business-event types with their `live` flag. live=false means the source is reconciled later
 * (payment settlement), so an automation must still poll. Operators can emit further types of the
 * form `area.name` through an emit_business_event operation; those are live.
 */
export const BUSINESS_EVENT_TYPES: Record<string, { live: boolean }> = {
  'webhook.endpoint_disabled': { live: true },
  'operation.completed': { live: true },
  'operation.failed': { live: true },
  // A payment's moves (services/payments/moves.ts), reconciled later: clients poll the payments list.
  'payment.pending': { live: false },
  'payment.authorised': { live: false },
  'payment.paid': { live: false },
  'payment.failed': { live: false },
  'payment.expired': { live: false },
  'payment.cancelled': { live: false },
  'payment.refunded': { live: false },
  // A disagreement between our ledger and the provider's report, found by reconciliation (services/payments/reconciliation.ts).
  'payment.mismatch': { live: false },
  'order.received': { live: true },
  // The communication callback of an order's payment settling (services/orders/paid.ts); the service
  // logs payment.paid for it, and an operation emitting order.paid is a payment's news: reconciled later.
  'order.paid': { live: false },
  'contact.created': { live: true },
};

export const BUSINESS_TYPE_PATTERN = '^[a-z][a-z0-9_]*(\\.[a-z][a-z0-9_]*)+$';

export const isLive = (type: string) => BUSINESS_EVENT_TYPES[type]?.live ?? !type.startsWith('payment.');

/**
 * Logs a business event in the caller's transaction; the relay then calls every matching
 * automation subscription. Returns the event's uuid.
 */
export async function emitBusinessEvent(
  tx: EntityManager,
  accountId: number,
  type: string,
  data: Record<string, unknown>,
  source: string | null = null,
): Promise<string> {
  const id = crypto.randomUUID();
  await insertBusinessEvent(tx, { id, account_id: accountId, type, data, live: isLive(type), source });
  return id;
}

/** The envelope an automation receiver gets (and the REST log shows). */
export const businessEnvelope = (
  e: Pick<BusinessEventRecord, 'id' | 'account_id' | 'type' | 'data' | 'live' | 'source' | 'occurred_at'>,
) => ({
  id: e.id,
  type: e.type,
  occurred_at: new Date(e.occurred_at).toISOString(),
  account_id: e.account_id,
  live: e.live,
  source: e.source,
  data: e.data,
});
