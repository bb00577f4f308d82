import { test } from 'node:test';
import assert from 'node:assert/strict';
import { holdEffect, lineStock, needsAttention, orderTotal, quantitiesPerProduct, quantityProblem } from '../../domain/orders/lines.js';
import { currencyExponent, majorToHundredths } from '../../domain/orders/money.js';
import { resolvePrice } from '../../services/orders/orders.js';
import { ORDER_STATUSES } from '../../domain/orders/vocabulary.js';

test('quantities are summed per tracked product and come out in ascending product id', () => {
  assert.deepEqual(
    quantitiesPerProduct([
      { productId: 9, quantity: 2, tracked: true },
      { productId: 3, quantity: 1, tracked: true },
      { productId: 9, quantity: 3, tracked: true },
      { productId: null, quantity: 4, tracked: false },
      { productId: 5, quantity: 4, tracked: false },
    ]),
    [
      { productId: 3, quantity: 1 },
      { productId: 9, quantity: 5 },
    ],
  );
});

test('line outcomes and needs_attention', () => {
  const held = new Set([1]);
  assert.equal(lineStock({ productId: 1, quantity: 1, tracked: true }, held), 'held');
  assert.equal(lineStock({ productId: 2, quantity: 1, tracked: true }, held), 'stock_short');
  assert.equal(lineStock({ productId: null, quantity: 1, tracked: false }, held), 'unresolved');
  assert.equal(lineStock({ productId: 3, quantity: 1, tracked: false }, held), 'untracked');
  assert.equal(needsAttention(['held', 'untracked']), false);
  assert.equal(needsAttention(['held', 'stock_short']), true);
  assert.equal(needsAttention(['unresolved']), true);
});

test('which status commits, releases or leaves the holds', () => {
  assert.deepEqual(Object.fromEntries(ORDER_STATUSES.map((s) => [s, holdEffect(s)])), {
    pending: 'none',
    confirmed: 'commit',
    processing: 'commit',
    shipped: 'commit',
    delivered: 'commit',
    cancelled: 'release',
    refunded: 'release',
  });
});

test('quantities: positive whole numbers only', () => {
  for (const bad of [0, -1, 1.5, Number.NaN, '2', null, 2_000_000_001]) assert.ok(quantityProblem(bad), String(bad));
  assert.equal(quantityProblem(1), null);
  assert.equal(quantityProblem(2_000_000_000), null);
});

test('major units to hundredths: exact decimals, the currency’s own precision', () => {
  assert.equal(majorToHundredths(19.99, 'USD'), 1999);
  assert.equal(majorToHundredths('19.99', 'USD'), 1999);
  assert.equal(majorToHundredths(0.1 + 0.2, 'USD'), 30);
  assert.equal(majorToHundredths(30, 'USD'), 3000);
  assert.equal(majorToHundredths('1.005', 'EUR'), 101);
  assert.equal(majorToHundredths(100.4, 'JPY'), 10000);
  assert.equal(majorToHundredths(100.5, 'JPY'), 10100);
  assert.equal(majorToHundredths('1.235', 'KWD'), 124);
  assert.equal(majorToHundredths(-2.5, 'USD'), -250);
  assert.equal(majorToHundredths('abc', 'USD'), null);
  assert.equal(majorToHundredths(Number.POSITIVE_INFINITY, 'USD'), null);
  assert.equal(currencyExponent('jpy'), 0);
  assert.equal(currencyExponent('XYZ'), 2);
});

test('a line’s price without one given: size replaces, sale price else price, add-ons add', () => {
  assert.equal(resolvePrice({ price: '1000', sale_price: null }), 1000);
  assert.equal(resolvePrice({ price: '1000', sale_price: '800' }), 800);
  assert.equal(resolvePrice({ price: '1000', sale_price: '800', variant_price: '1500', addons_price: '250' }), 1750);
  assert.equal(
    orderTotal([
      { quantity: 2, item_price: 800 },
      { quantity: 1, item_price: 5 },
    ]),
    1605,
  );
});
