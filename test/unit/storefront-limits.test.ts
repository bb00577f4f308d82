import { test } from 'node:test';
import assert from 'node:assert/strict';
import { basketCapProblems } from '../../domain/shop/cart.js';

// The shop's quantity caps of a basket (docs/decisions.md, "The storefront cannot be hoarded").

const caps = { maxLineQuantity: 10, maxBasketQuantity: 50 };
const keys = [(i: number) => `items.${i}.quantity`, 'items'] as const;

test('a line over the per-line cap is named; the basket cap counts what is already in the basket', () => {
  assert.equal(basketCapProblems(0, [10, 10], caps, ...keys), null);
  assert.deepEqual(basketCapProblems(0, [3, 11], caps, ...keys), {
    'items.1.quantity': ['This shop sells at most 10 of one item per line.'],
  });
  assert.equal(basketCapProblems(40, [10], caps, ...keys), null, 'exactly at the basket cap');
  assert.deepEqual(basketCapProblems(41, [10], caps, ...keys), { items: ['A basket in this shop holds at most 50 items in all.'] });
  // Five lines of ten from one product: each line fits, the basket does not.
  assert.deepEqual(Object.keys(basketCapProblems(0, [10, 10, 10, 10, 10, 1], caps, ...keys) ?? {}), ['items']);
});
