import { DomainError, forbidden } from '../platform/errors.js';

// Whether a shop takes anything: the one rule the shop's pages, its baskets and every order door
// (API, chat, page) share, so it lives with the shop (the contract's catalogue) itself.

const SHOP_CLOSED = 'shop_closed';

/**
 * A suspended account's shop takes nothing: its pages answer that the shop is closed (403), and
 * createOrder refuses every order of it the same way, whichever door it came through.
 */
export function requireShopOpen(accountStatus: string): void {
  if (accountStatus !== 'active') throw forbidden('This shop is closed.', SHOP_CLOSED);
}

/** The refusal requireShopOpen throws: a door that must not fail (a provider webhook) records it instead. */
export const isShopClosed = (err: unknown): err is DomainError =>
  err instanceof DomainError && err.kind === 'forbidden' && err.detail.reason === SHOP_CLOSED;
