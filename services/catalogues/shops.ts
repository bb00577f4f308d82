import type { RequestContext } from '../platform/context.js';
import { notFound } from '../platform/errors.js';
import { numericId } from '../platform/ids.js';
import { one } from '../../entities/db.js';
import type { PlatformKey, SourceOfTruth, StockPolicy } from '../../domain/catalogues/vocabulary.js';

/** A shop as the services of this family need it (the row, snake_case as stored). */
export interface ShopRow {
  id: number;
  account_id: number;
  name: string;
  default_currency: string | null;
  meta_catalogue_id: string | null;
  channels: PlatformKey[];
  sku_prefix: string;
  stock_policy: StockPolicy;
  source_of_truth: SourceOfTruth;
  reservation_ttl_hours: number;
  low_stock_threshold: number | null;
  allow_backorders: boolean;
}

/**
 * The caller's shop named by a `{catalogue}` path value: a numeric local id of the caller's account,
 * else 404 (another tenant's shop reads exactly like a missing one). `forUpdate` locks the row for
 * the transaction (sku issue, settings changes).
 */
export async function requireShop(rc: RequestContext, ref: string | number, o: { forUpdate?: boolean } = {}): Promise<ShopRow> {
  const id = numericId(ref, 'Catalogue');
  const row = await one<ShopRow>(
    rc.em,
    `select id, account_id, name, default_currency, meta_catalogue_id, channels, sku_prefix, stock_policy, source_of_truth,
            reservation_ttl_hours, low_stock_threshold, allow_backorders
       from catalogues where id = ? and account_id = ?${o.forUpdate ? ' for update' : ''}`,
    [id, rc.account.id],
  );
  if (!row) throw notFound('Catalogue');
  return row;
}
