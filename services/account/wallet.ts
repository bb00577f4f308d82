import type { EntityManager } from '@mikro-orm/postgresql';
import { debit, debitSql } from './store.js';

export { debitSql };

/**
 * Debits a prepaid wallet by segments × price, refusing to go negative; postpaid accounts are not
 * debited. Returns false when the balance cannot cover it (nothing changed). One conditional update:
 * the row lock it takes orders concurrent debits, and each re-checks the balance the previous left,
 * so no interleaving of sends and campaign pages can overdraw. Call it inside the transaction that
 * writes what is being paid for, so both commit or neither does, and last in it: every send of the
 * account waits for this one row until the transaction ends.
 */
export async function debitSegments(
  em: EntityManager,
  accountId: number,
  segments: number,
  pricePerSegment: string,
  /** The transaction's commit then does not wait for the flush: the caller answers only after durableCommit. */
  opts: { releaseBeforeFlush?: boolean } = {},
): Promise<boolean> {
  if (segments <= 0) return true;
  return debit(em, debitSql(accountId, segments, pricePerSegment, opts));
}
