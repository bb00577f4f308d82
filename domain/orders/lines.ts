import type { OrderStatus } from './vocabulary.js';

// Pure rules of order lines and their stock (Resources > Order; States > Order; notes §1.2-1.3):
// quantities are summed per product before anything is held (two lines of one product each fit
// alone, not together), products are held in ascending id order (two orders sharing products never
// wait on each other crosswise), and a product is held whole or not at all.

/** What became of one line's quantity at creation. */
export type LineStock = 'held' | 'stock_short' | 'unresolved' | 'untracked';

/** The limits of an order's input (ours; the contract states none). */
export const ORDER_LIMITS = {
  linesMax: 100,
  /** A line's quantity: a positive whole number no larger than an inventory can be. */
  quantityMax: 2_000_000_000,
  pageDefault: 25,
  pageMax: 100,
} as const;

export interface MatchedLine {
  /** null: the code is not a live product of the shop. */
  productId: number | null;
  quantity: number;
  /** The product keeps a count (inventory not null). */
  tracked: boolean;
}

/** The quantity wanted per tracked product, in ascending product id order (the order the rows are locked in). */
export function quantitiesPerProduct(lines: readonly MatchedLine[]): Array<{ productId: number; quantity: number }> {
  const sum = new Map<number, number>();
  for (const l of lines) {
    if (l.productId === null || !l.tracked) continue;
    sum.set(l.productId, (sum.get(l.productId) ?? 0) + l.quantity);
  }
  return [...sum.entries()].sort((a, b) => a[0] - b[0]).map(([productId, quantity]) => ({ productId, quantity }));
}

/** A line's outcome once its product's hold is known: every line of a product shares the product's outcome. */
export function lineStock(line: MatchedLine, held: ReadonlySet<number>): LineStock {
  if (line.productId === null) return 'unresolved';
  if (!line.tracked) return 'untracked';
  return held.has(line.productId) ? 'held' : 'stock_short';
}

/** The contract's needs_attention: at least one line stock_short or unresolved. */
export const needsAttention = (stock: readonly LineStock[]) => stock.some((s) => s === 'stock_short' || s === 'unresolved');

/**
 * What a status does to the order's holds (States > Order): confirmed or any later status except
 * cancelled/refunded commits them, cancelled/refunded releases them, pending leaves them. It depends
 * on the new status only: any status may follow any status, and each hold moves at most once by
 * its own status (held → committed | released | expired).
 */
export function holdEffect(status: OrderStatus): 'commit' | 'release' | 'none' {
  if (status === 'pending') return 'none';
  if (status === 'cancelled' || status === 'refunded') return 'release';
  return 'commit';
}

/** Sum of the lines in hundredths (lines and total are frozen at creation). */
export const orderTotal = (lines: ReadonlyArray<{ quantity: number; item_price: number }>) =>
  lines.reduce((t, l) => t + l.quantity * l.item_price, 0);

/** A line's quantity problem, or null: positive whole numbers up to ORDER_LIMITS.quantityMax. */
export function quantityProblem(q: unknown): string | null {
  if (typeof q !== 'number' || !Number.isInteger(q)) return 'The quantity must be a whole number.';
  if (q < 1) return 'The quantity must be at least 1.';
  if (q > ORDER_LIMITS.quantityMax) return `The quantity may not be greater than ${ORDER_LIMITS.quantityMax}.`;
  return null;
}
