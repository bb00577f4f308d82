import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterCount,
  availableOf,
  countMovement,
  duplicateSkuErrors,
  lowStockDue,
  reachesLowStock,
  type StockedProduct,
} from '../../domain/catalogues/stock.js';
import { AVAILABILITIES } from '../../domain/catalogues/vocabulary.js';

const product = (p: Partial<StockedProduct> = {}): StockedProduct => ({
  availability: 'in stock',
  availabilityExplicit: false,
  inventory: 5,
  reserved: 0,
  ...p,
});

test('available is inventory less reserved; untracked products have none', () => {
  assert.equal(availableOf(10, 3), 7);
  assert.equal(availableOf(2, 5), -3, 'an absolute count may land below what is held');
  assert.equal(availableOf(null, 0), null);
});

test('availability follows the count: 0 → out of stock, recovery → in stock; available for order with backorders', () => {
  assert.equal(afterCount(product(), 0, false).availability, 'out of stock');
  assert.equal(afterCount(product({ availability: 'out of stock', inventory: 0 }), 4, false).availability, 'in stock');
  assert.equal(afterCount(product(), 0, true).availability, 'available for order');
  assert.equal(afterCount(product({ availability: 'available for order', inventory: 0 }), 1, true).availability, 'in stock');
  assert.equal(afterCount(product({ reserved: 4 }), 4, false).availability, 'out of stock', 'what pending orders hold is not for sale');
  assert.equal(afterCount(product({ reserved: 4 }), 5, false).availability, 'in stock');
});

test('discontinued and preorder are never put back on sale; other explicit values follow the count and stop being explicit', () => {
  for (const kept of ['discontinued', 'preorder'] as const) {
    for (const count of [0, 10]) {
      const after = afterCount(product({ availability: kept, availabilityExplicit: true, inventory: 3 }), count, false);
      assert.deepEqual([after.availability, after.availabilityExplicit], [kept, true], `${kept} at ${count}`);
    }
  }
  const chosen = afterCount(product({ availability: 'in stock', availabilityExplicit: true }), 0, false);
  assert.deepEqual([chosen.availability, chosen.availabilityExplicit], ['out of stock', false]);
  const paused = afterCount(product({ availability: 'out of stock', availabilityExplicit: true }), 12, false);
  assert.deepEqual([paused.availability, paused.availabilityExplicit], ['in stock', false]);
  for (const a of AVAILABILITIES) assert.ok(AVAILABILITIES.includes(afterCount(product({ availability: a }), 1, false).availability));
});

test('a first count on an untracked product moves from zero; later counts move by the difference', () => {
  assert.equal(countMovement(null, 7), 7);
  assert.equal(countMovement(null, 0), 0);
  assert.equal(countMovement(10, 4), -6);
  assert.equal(countMovement(4, 10), 6);
});

test('low stock: reached at or below the threshold, for tracked products of shops with a threshold, once a day', () => {
  assert.equal(reachesLowStock(3, 3), true);
  assert.equal(reachesLowStock(2, 3), true);
  assert.equal(reachesLowStock(-1, 0), true);
  assert.equal(reachesLowStock(4, 3), false);
  assert.equal(reachesLowStock(null, 3), false, 'untracked');
  assert.equal(reachesLowStock(0, null), false, 'no threshold');
  assert.equal(lowStockDue(1, 3, null, '2026-11-24'), true);
  assert.equal(lowStockDue(1, 3, '2026-11-23', '2026-11-24'), true);
  assert.equal(lowStockDue(1, 3, '2026-11-24', '2026-11-24'), false);
});

test('a sku sent twice is named at its later rows', () => {
  assert.deepEqual(duplicateSkuErrors([{ sku: 'A', inventory: 1 }]), {});
  assert.deepEqual(
    duplicateSkuErrors([
      { sku: 'A', inventory: 1 },
      { sku: 'B', inventory: 1 },
      { sku: 'A', inventory: 2 },
      { sku: 'A', inventory: 3 },
    ]),
    {
      'levels.2.sku': ['The sku is already given in levels.0.'],
      'levels.3.sku': ['The sku is already given in levels.0.'],
    },
  );
  assert.deepEqual(
    duplicateSkuErrors([
      { sku: 'a', inventory: 1 },
      { sku: 'A', inventory: 1 },
    ]),
    {},
    'skus are case sensitive',
  );
});
