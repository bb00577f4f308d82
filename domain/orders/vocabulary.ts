// The words of the contract's order family (Resources > Order; States > Order), shared by every layer.

/** Order statuses (States > Order); any value may follow any value. */
export const ORDER_STATUSES = ['pending', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'refunded'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/** Where an order came from. */
export const ORDER_PLATFORMS = ['whatsapp', 'storefront', 'ivr', 'manual'] as const;
export type OrderPlatform = (typeof ORDER_PLATFORMS)[number];

/** A stock hold: held by a pending order, then committed, released or expired exactly once. */
export const HOLD_STATUSES = ['held', 'committed', 'released', 'expired'] as const;
export type HoldStatus = (typeof HOLD_STATUSES)[number];
