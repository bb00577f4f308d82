// The outbound walk of a message. Receipts arrive late, twice or out of order; a status only ever
// moves forward in this order, and failed is final except that it never overwrites read/delivered.
export type MessageStatus = 'queued' | 'processing' | 'sent' | 'checking_delivery' | 'delivered' | 'read' | 'failed' | 'received';

const RANK: Record<MessageStatus, number> = {
  queued: 0,
  processing: 1,
  sent: 2,
  checking_delivery: 3,
  delivered: 4,
  read: 5,
  failed: 6,
  received: 0,
};

export function canMove(from: MessageStatus, to: MessageStatus): boolean {
  if (from === to) return false;
  if (from === 'failed' || from === 'received' || to === 'received') return false;
  if (to === 'failed') return from !== 'delivered' && from !== 'read';
  return RANK[to] > RANK[from];
}

/** Statuses a move into `to` may start from: used as a SQL guard so concurrent writers never go backwards. */
export function movableFrom(to: MessageStatus): MessageStatus[] {
  return (Object.keys(RANK) as MessageStatus[]).filter((s) => canMove(s, to));
}

export const FINAL_STATUSES: MessageStatus[] = ['delivered', 'read', 'failed'];
