import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../../entities/db.js';
import { RELEASE_BEFORE_FLUSH } from '../platform/durable-commit.js';

/**
 * Debits a prepaid wallet by segments × price, refusing to go negative; postpaid accounts are not
 * debited. Returns false when the balance cannot cover it (nothing changed). One conditional update:
 * the row lock it takes orders concurrent debits, and each re-checks the balance the previous left,
 * so no interleaving of sends and campaign pages can overdraw. Call it inside the transaction that
 * writes what is being paid for, so both commit or neither does, and last in it: every send of the
 * account waits for this one row until the transaction ends.
 */
/**
 * The debit as SQL (`returning id`: a row when it is made), for a statement that writes what is paid
 * for in the same breath (a CTE whose row the write requires). Its commit does not wait for the
 * flush when asked (services/platform/durable-commit.ts): the caller then answers only after durableCommit.
 */
export function debitSql(accountId: number, segments: number, pricePerSegment: string, opts: { releaseBeforeFlush?: boolean } = {}) {
  return {
    sql: `update accounts set wallet_balance = case when billing_mode = 'prepaid' then wallet_balance - (?::numeric * ?) else wallet_balance end, updated_at = now()
      where id = ? and (billing_mode <> 'prepaid' or wallet_balance >= ?::numeric * ?)${opts.releaseBeforeFlush ? ` and ${RELEASE_BEFORE_FLUSH}` : ''} returning id`,
    params: [pricePerSegment, segments, accountId, pricePerSegment, segments] as unknown[],
  };
}

export async function debitSegments(
  em: EntityManager,
  accountId: number,
  segments: number,
  pricePerSegment: string,
  /** The transaction's commit then does not wait for the flush: the caller answers only after durableCommit. */
  opts: { releaseBeforeFlush?: boolean } = {},
): Promise<boolean> {
  if (segments <= 0) return true;
  const debit = debitSql(accountId, segments, pricePerSegment, opts);
  const row = await one<{ id: number }>(em, debit.sql, debit.params);
  return row !== null;
}
