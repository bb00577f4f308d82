import type { EntityManager } from '@mikro-orm/postgresql';
import { tablesOf, type Row } from '../../entities/database.js';
import { exec, many, one } from '../../entities/db.js';
import type { CartStatus } from '../../domain/shop/index.js';

// The shop family's statements (issue 24, point 1): the only code that names carts and cart_items.
// What a basket shows of a product, a size or an add-on is the catalogue's, read through
// services/catalogues/index.ts.

/** What the link opens on: the menu, one category, or one product. */
export type Opens =
  { kind: 'menu' } | { kind: 'category'; category_id: number; slug: string | null } | { kind: 'product'; product_id: number; sku: string };

const CART_COLUMNS = [
  'id',
  'account_id',
  'catalogue_id',
  'ref',
  'page_key',
  'status',
  'conversation_id',
  'customer_handle',
  'note',
  'subtotal_minor',
  'currency',
  'order_id',
  'opens',
  'last_activity_at',
  'created_at',
  'updated_at',
] as const;
const CART_SQL_COLUMNS = CART_COLUMNS.join(', ');

/** A basket as its answer needs it; `opens` is stored as JSON, always one of the Opens shapes. */
export type CartRow = Omit<Pick<Row<'shop', 'carts'>, (typeof CART_COLUMNS)[number]>, 'opens'> & { opens: Opens };
type Item = Row<'shop', 'cart_items'>;

const asCart = (row: object | undefined | null): CartRow | null => (row ? (row as CartRow) : null);

// ---- baskets -----------------------------------------------------------------------------------

/** The basket of a page address (ref and page key), locked for the transaction with `forUpdate`. */
export async function cartOfPage(em: EntityManager, ref: string, pageKey: string, forUpdate = false): Promise<CartRow | null> {
  const q = tablesOf(em, 'shop').selectFrom('carts').select(CART_COLUMNS).where('ref', '=', ref).where('page_key', '=', pageKey);
  return asCart(await (forUpdate ? q.forUpdate() : q).executeTakeFirst());
}

/** A basket of the account by id or by ref, locked for the transaction with `forUpdate`. */
export async function cartOfAccount(
  em: EntityManager,
  accountId: number,
  by: { id: number } | { ref: string },
  forUpdate = false,
): Promise<CartRow | null> {
  const base = tablesOf(em, 'shop').selectFrom('carts').select(CART_COLUMNS).where('account_id', '=', accountId);
  const q = 'id' in by ? base.where('id', '=', String(by.id)) : base.where('ref', '=', by.ref);
  return asCart(await (forUpdate ? q.forUpdate() : q).executeTakeFirst());
}

/** A basket by id, as it is now. */
export async function cartById(em: EntityManager, cartId: string): Promise<CartRow | null> {
  return asCart(await tablesOf(em, 'shop').selectFrom('carts').select(CART_COLUMNS).where('id', '=', cartId).executeTakeFirst());
}

/** How many of the account's baskets the filter keeps, and one page of them, newest first. */
export async function cartPage(
  em: EntityManager,
  accountId: number,
  f: { status?: CartStatus; conversationId?: string | null },
  limit: number,
  offset: number,
) {
  const filtered = () => {
    let q = tablesOf(em, 'shop').selectFrom('carts').where('account_id', '=', accountId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.conversationId !== undefined) q = q.where('conversation_id', '=', f.conversationId);
    return q;
  };
  const { n } = await filtered()
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .executeTakeFirstOrThrow();
  const rows = await filtered().select(CART_COLUMNS).orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return { total: Number(n), rows: rows.map((r) => r as CartRow) };
}

export interface NewCart {
  accountId: number;
  catalogueId: number;
  ref: string;
  pageKey: string;
  status: CartStatus;
  currency: string;
  conversationId: string | null;
  customerHandle: string | null;
  opens: Opens;
  openedFrom: string | null;
}

/** A new basket; null when its ref is taken in the account (the caller draws another). */
export async function insertCartRow(tx: EntityManager, c: NewCart): Promise<CartRow | null> {
  return one<CartRow>(
    tx,
    `insert into carts (account_id, catalogue_id, ref, page_key, status, conversation_id, customer_handle, subtotal_minor, currency, opens,
                        opened_from, last_activity_at, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, 0, ?, ?::jsonb, ?, now(), now(), now())
     on conflict (account_id, ref) do nothing returning ${CART_SQL_COLUMNS}`,
    [
      c.accountId,
      c.catalogueId,
      c.ref,
      c.pageKey,
      c.status,
      c.conversationId,
      c.customerHandle,
      c.currency,
      JSON.stringify(c.opens),
      c.openedFrom,
    ],
  );
}

export async function deleteCart(em: EntityManager, cartId: string): Promise<void> {
  await exec(em, 'delete from carts where id = ?', [cartId]);
}

export async function setCartNote(tx: EntityManager, cartId: string, note: string | null): Promise<void> {
  await exec(tx, 'update carts set note = ? where id = ?', [note, cartId]);
}

/** Subtotal from the lines; activity moves an abandoned basket back to open. */
export async function refreshSubtotal(tx: EntityManager, cartId: string): Promise<void> {
  await exec(
    tx,
    `update carts set subtotal_minor = coalesce((select sum(unit_price_minor * quantity) from cart_items where cart_id = carts.id), 0),
            status = case when status = 'abandoned' then 'open' else status end, last_activity_at = now(), updated_at = now()
      where id = ?`,
    [cartId],
  );
}

/** The basket became an order, sent from `submittedFrom`. */
export async function markOrdered(tx: EntityManager, cartId: string, orderId: number, submittedFrom: string): Promise<CartRow> {
  return (await one<CartRow>(
    tx,
    `update carts set status = 'ordered', order_id = ?, submitted_from = ?, submitted_at = now(), updated_at = now() where id = ?
     returning ${CART_SQL_COLUMNS}`,
    [orderId, submittedFrom, cartId],
  ))!;
}

/** The basket the timer judges, locked, with its seconds since the last activity and its line count. */
export async function cartToJudge(tx: EntityManager, accountId: number, cartId: number) {
  return one<CartRow & { idle: string; items: string }>(
    tx,
    `select ${CART_COLUMNS.map((c) => `c.${c}`).join(', ')}, extract(epoch from now() - c.last_activity_at) as idle,
            (select count(*) from cart_items i where i.cart_id = c.id) as items
       from carts c where c.id = ? and c.account_id = ? for update`,
    [cartId, accountId],
  );
}

export async function expireCart(tx: EntityManager, cartId: string): Promise<void> {
  await exec(tx, `update carts set status = 'expired', updated_at = now() where id = ?`, [cartId]);
}

export async function abandonCart(tx: EntityManager, cartId: string): Promise<CartRow> {
  return (await one<CartRow>(tx, `update carts set status = 'abandoned', updated_at = now() where id = ? returning ${CART_SQL_COLUMNS}`, [
    cartId,
  ]))!;
}

/** What one address did in a shop, counted per hour: baskets opened from it, orders sent from it. */
const COUNTED = {
  baskets: { address: 'opened_from', at: 'created_at' },
  orders: { address: 'submitted_from', at: 'submitted_at' },
} as const;

/**
 * Seconds until the `perHour`-th newest basket (or order) of `address` in the shop leaves the
 * window: when there is one the address is at the limit; null when it has room.
 */
export async function addressWait(
  tx: EntityManager,
  kind: keyof typeof COUNTED,
  catalogueId: number,
  address: string,
  perHour: number,
  windowSeconds: number,
): Promise<number | null> {
  const c = COUNTED[kind];
  const row = await one<{ wait: string | null }>(
    tx,
    `select extract(epoch from k.${c.at} + make_interval(secs => ?) - now()) as wait
       from carts k
      where k.catalogue_id = ? and k.${c.address} = ? and k.${c.at} > now() - make_interval(secs => ?)
      order by k.${c.at} desc offset ?::int - 1 limit 1`,
    [windowSeconds, catalogueId, address, windowSeconds, perHour],
  );
  return row?.wait == null ? null : Number(row.wait);
}

// ---- lines -------------------------------------------------------------------------------------

/** The lines of these baskets, by basket and line id. */
export async function itemsOf(em: EntityManager, cartIds: number[]) {
  return many<Pick<Item, 'id' | 'cart_id' | 'product_id' | 'variant_id' | 'addon_ids' | 'quantity' | 'note' | 'unit_price_minor'>>(
    em,
    `select id, cart_id, product_id, variant_id, addon_ids, quantity, note, unit_price_minor
       from cart_items where cart_id = any(?::bigint[]) order by cart_id, id`,
    [cartIds],
  );
}

/** How many lines and units the basket holds. */
export async function basketCount(tx: EntityManager, cartId: string): Promise<{ lines: number; units: number }> {
  const row = (await one<{ n: string; units: string }>(
    tx,
    'select count(*) as n, coalesce(sum(quantity), 0) as units from cart_items where cart_id = ?',
    [cartId],
  ))!;
  return { lines: Number(row.n), units: Number(row.units) };
}

/** A basket line priced by the service, as it is stored. */
export interface PricedLine {
  productId: number;
  variantId: number | null;
  addonIds: number[];
  quantity: number;
  note: string | null;
  unitPriceMinor: number;
}

/** Appends lines to the basket, in the order given. */
export async function insertItems(tx: EntityManager, cartId: string, lines: readonly PricedLine[]): Promise<void> {
  await exec(
    tx,
    `insert into cart_items (cart_id, product_id, variant_id, addon_ids, quantity, note, unit_price_minor, created_at, updated_at)
     select ?, l.product_id, l.variant_id, l.addon_ids, l.quantity, l.note, l.unit_price_minor, now(), now()
       from jsonb_to_recordset(?::jsonb) as l(ord int, product_id bigint, variant_id bigint, addon_ids jsonb, quantity int, note text,
            unit_price_minor bigint)
      order by l.ord`,
    [
      cartId,
      JSON.stringify(
        lines.map((l, ord) => ({
          ord,
          product_id: l.productId,
          variant_id: l.variantId,
          addon_ids: l.addonIds,
          quantity: l.quantity,
          note: l.note,
          unit_price_minor: l.unitPriceMinor,
        })),
      ),
    ],
  );
}

/** Removes one line of the basket; false when the basket has no such line. */
export async function deleteItem(tx: EntityManager, cartId: string, itemId: number): Promise<boolean> {
  return (await exec(tx, 'delete from cart_items where id = ? and cart_id = ?', [itemId, cartId])) > 0;
}

/** The basket's lines as a submission re-prices them, in line order. */
export async function itemsToSubmit(tx: EntityManager, cartId: string) {
  return many<Pick<Item, 'id' | 'product_id' | 'variant_id' | 'addon_ids' | 'quantity' | 'note'>>(
    tx,
    'select id, product_id, variant_id, addon_ids, quantity, note from cart_items where cart_id = ? order by id',
    [cartId],
  );
}

/** A line's price and size as the submission found them. */
export async function repriceItem(tx: EntityManager, itemId: string, unitPriceMinor: number, variantId: number | null): Promise<void> {
  await exec(tx, 'update cart_items set unit_price_minor = ?, variant_id = ?, updated_at = now() where id = ?', [
    unitPriceMinor,
    variantId,
    itemId,
  ]);
}
