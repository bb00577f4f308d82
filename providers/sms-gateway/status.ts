// The SMS gateway's message statuses (Twilio's vocabulary) in ours.
import type { MessageStatus } from '../../domain/messaging/message-status.js';

/** Twilio-style statuses to ours; interim ones (queued, sending, accepted, scheduled) change nothing. */
export function mapSmsGatewayStatus(s: string): MessageStatus | null {
  switch (s) {
    case 'sent':
      return 'sent';
    case 'delivered':
      return 'delivered';
    case 'read':
      return 'read';
    case 'undelivered':
    case 'failed':
    case 'canceled':
      return 'failed';
    default:
      return null;
  }
}

/** What a failed message's record says; Twilio gives only a numeric ErrorCode (e.g. 30003). */
export const smsFailureMessage = (errorCode: string | null | undefined) => `Delivery failed (provider code ${errorCode ?? 'unknown'})`;
