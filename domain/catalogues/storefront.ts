// The shop settings that say what the public shop page may take from one visitor: stored on the
// shop (the contract's catalogue), read by the shop family's pages and baskets.

/** Units one basket line may hold at most, whatever the shop's own cap. */
export const LINE_QUANTITY_MAX = 999;
/** Lines one basket may hold, through the link and the page together. */
export const BASKET_LINES_MAX = 100;

/**
 * What the public shop page may take from one visitor (docs/decisions.md, "The storefront cannot be
 * hoarded"): shop settings, these their defaults. A line and a basket hold at most so many units; an
 * order from a basket with no known customer holds its stock for the checkout window only (never
 * longer than the shop's reservation TTL); one client address may open so many baskets on the
 * shop's product pages, and submit so many orders from its pages, in any hour.
 */
export const STOREFRONT_DEFAULTS = {
  maxLineQuantity: 10,
  maxBasketQuantity: 50,
  checkoutHoldMinutes: 15,
  addressBasketsPerHour: 20,
  addressOrdersPerHour: 10,
} as const;

/** The ranges the shop settings accept. */
export const STOREFRONT_RANGES = {
  maxLineQuantity: { minimum: 1, maximum: LINE_QUANTITY_MAX },
  maxBasketQuantity: { minimum: 1, maximum: LINE_QUANTITY_MAX * BASKET_LINES_MAX },
  checkoutHoldMinutes: { minimum: 1, maximum: 7 * 24 * 60 },
  perAddressHour: { minimum: 1, maximum: 100_000 },
} as const;
