import type { RequestContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import { numericId } from '../platform/ids.js';
import { shopOfAccount, type ShopRow } from './store/shops.js';

export type { ShopRow };

/**
 * The caller's shop named by a `{catalogue}` path value: a numeric local id of the caller's account,
 * else 404 (another tenant's shop reads exactly like a missing one). `forUpdate` locks the row for
 * the transaction (sku issue, settings changes).
 */
export async function requireShop(rc: RequestContext, ref: string | number, o: { forUpdate?: boolean } = {}): Promise<ShopRow> {
  const id = numericId(ref, 'Catalogue');
  const row = await shopOfAccount(rc.em, id, rc.account.id, o.forUpdate);
  if (!row) throw notFound('Catalogue');
  return row;
}
