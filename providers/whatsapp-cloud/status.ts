// WhatsApp message statuses (the `statuses[].status` of Meta's webhooks) in ours.
import type { MessageStatus } from '../../domain/messaging/message-status.js';

const STATUSES: Record<string, MessageStatus> = { sent: 'sent', delivered: 'delivered', read: 'read', failed: 'failed' };

/** sent, delivered, read and failed map one to one; anything else (e.g. `deleted`, `warning`) changes nothing. */
export function mapWhatsAppStatus(s: string): MessageStatus | null {
  return Object.hasOwn(STATUSES, s) ? STATUSES[s] : null;
}

export interface GraphStatusError {
  code?: number;
  title?: string;
  message?: string;
  error_data?: { details?: string };
}

/** What a failed message's record says: Meta's most specific text and its error code (131047, 131026, …). */
export function whatsAppFailureMessage(err: GraphStatusError | undefined): string {
  return `${err?.error_data?.details ?? err?.message ?? err?.title ?? 'Delivery failed'} (provider code ${err?.code ?? 'unknown'})`;
}
