// The words of the contract's shop family (Resources > Cart; States > Cart), shared by every layer.

/** Basket statuses (States > Cart). */
export const CART_STATUSES = ['open', 'sent', 'ordered', 'abandoned', 'expired'] as const;
export type CartStatus = (typeof CART_STATUSES)[number];
