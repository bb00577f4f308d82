import type { EntityManager } from '@mikro-orm/postgresql';
import { rateLimited } from '../platform/errors.js';
import { ADDRESS_WINDOW_SECONDS } from '../../domain/shop/cart.js';
import { one } from '../../entities/db.js';
import { shopAddressLimit } from '../catalogues/index.js';
import { addressWait } from './store.js';

// What the public shop page checks before it takes anything from a visitor (docs/decisions.md,
// "The storefront cannot be hoarded"): the account's shop is open, and the client address has room
// in the shop's hourly limits (the open shop is the catalogue family's rule, shared with orders).
// The page needs no credential, so these are the only gates it has.

/** What one address may do in a shop per hour (the shop setting address_<kind>_per_hour limits it). */
const COUNTED = {
  baskets: { what: 'baskets opened' },
  orders: { what: 'orders sent' },
} as const;
export type AddressCounted = keyof typeof COUNTED;

/** The advisory lock class of a shop's per-address counts ("SA"). */
const ADDRESS_LOCK_CLASS = 0x5341;

/** The form an address is stored and compared in (an IPv6 text form is at most 45 characters). */
export const addressKey = (address: string) => address.trim().toLowerCase().slice(0, 64);

/**
 * Refuses (429 with the wait) when `address` already did `kind` as often as the shop allows in the
 * last hour. Runs in the transaction that then records the new basket or submission, holding a
 * transaction lock on (shop, address): two requests of one address cannot both pass the count.
 */
export async function requireAddressRoom(tx: EntityManager, kind: AddressCounted, catalogueId: number, address: string): Promise<void> {
  const c = COUNTED[kind];
  const key = addressKey(address);
  await one(tx, 'select pg_advisory_xact_lock(?::int, hashtext(?))', [ADDRESS_LOCK_CLASS, `${kind}:${catalogueId}:${key}`]);
  const perHour = await shopAddressLimit(tx, catalogueId, kind);
  if (perHour === null) return;
  // The limit-th newest one inside the window: when it exists the address is at the limit, and one
  // more fits once it leaves the window.
  const wait = await addressWait(tx, kind, catalogueId, key, perHour, ADDRESS_WINDOW_SECONDS);
  if (wait !== null)
    throw rateLimited(
      `Too many ${c.what} from your network in this shop: at most ${perHour} an hour. Try again later.`,
      wait,
      'address_limit',
    );
}
