import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  availabilityOf,
  compareCopies,
  priceOf,
  pullInChanges,
  sameDrift,
  type OurCopy,
  type TheirCopy,
} from '../../domain/catalogues/drift.js';

// The drift comparison of a platform copy with ours (States > Product listing): which fields differ,
// in our representation, and what a pull-in (source_of_truth platform) may write.

const ours = (o: Partial<OurCopy> = {}): OurCopy => ({
  name: 'Blue mug',
  description: 'A mug, blue',
  price: 1250,
  salePrice: null,
  currency: 'USD',
  availability: 'in stock',
  condition: 'new',
  brand: 'Acme',
  category: 'Kitchen',
  ...o,
});

/** The platform copy as the chat provider's catalogue answers it for `ours()`. */
const theirs = (t: Partial<TheirCopy> = {}): TheirCopy => ({
  name: 'Blue mug',
  description: 'A mug, blue',
  price: '12.50 USD',
  salePrice: null,
  currency: 'USD',
  availability: 'in stock',
  condition: 'new',
  brand: 'Acme',
  category: 'Kitchen',
  ...t,
});

test('the same product in both representations has no drift', () => {
  assert.deepEqual(compareCopies(ours(), theirs()), []);
  assert.deepEqual(compareCopies(ours(), theirs({ price: 1250 })), [], 'hundredths and the price string are one price');
  assert.deepEqual(compareCopies(ours(), theirs({ price: 'USD 12.50', currency: null })), [], 'currency read from the price string');
  assert.deepEqual(compareCopies(ours({ price: 1200 }), theirs({ price: '12 USD' })), []);
  assert.deepEqual(compareCopies(ours({ price: 1250 }), theirs({ price: '12.5 USD' })), []);
});

test('a changed price is drift in hundredths, ours first', () => {
  assert.deepEqual(compareCopies(ours(), theirs({ price: '9.99 USD' })), [{ field: 'price', ours: 1250, theirs: 999 }]);
  assert.deepEqual(compareCopies(ours(), theirs({ price: '$1,234.50' })), [{ field: 'price', ours: 1250, theirs: 123450 }]);
});

test('every compared field is reported, each once', () => {
  const drift = compareCopies(
    ours({ salePrice: 1000 }),
    theirs({
      name: 'Red mug',
      description: 'A mug, red',
      price: '13.00 EUR',
      salePrice: null,
      currency: 'EUR',
      availability: 'out of stock',
      condition: 'used',
      brand: 'Other',
      category: null,
    }),
  );
  assert.deepEqual(drift, [
    { field: 'name', ours: 'Blue mug', theirs: 'Red mug' },
    { field: 'description', ours: 'A mug, blue', theirs: 'A mug, red' },
    { field: 'price', ours: 1250, theirs: 1300 },
    { field: 'sale_price', ours: 1000, theirs: null },
    { field: 'currency', ours: 'USD', theirs: 'EUR' },
    { field: 'availability', ours: 'in stock', theirs: 'out of stock' },
    { field: 'condition', ours: 'new', theirs: 'used' },
    { field: 'brand', ours: 'Acme', theirs: 'Other' },
    { field: 'category', ours: 'Kitchen', theirs: null },
  ]);
});

test('stock and image_url are never compared', () => {
  const platformCopy = { ...theirs(), inventory: 0, imageUrl: 'https://cdn.example/other.png', image_url: 'x' } as TheirCopy;
  assert.deepEqual(compareCopies(ours(), platformCopy), []);
});

test('availability spellings are one availability', () => {
  for (const v of ['in stock', 'IN STOCK', 'in_stock', ' In Stock ', 'instock']) {
    assert.deepEqual(compareCopies(ours(), theirs({ availability: v })), [], v);
  }
  assert.equal(availabilityOf('out_of_stock'), 'out of stock');
  assert.equal(availabilityOf('backorder'), 'available for order');
  assert.equal(availabilityOf('available_for_order'), 'available for order');
  assert.equal(availabilityOf('pending'), 'pending', "a platform word we have none for is kept as the platform's");
  assert.deepEqual(compareCopies(ours(), theirs({ availability: 'pending' })), [
    { field: 'availability', ours: 'in stock', theirs: 'pending' },
  ]);
});

test('blank text and null are the same; surrounding spaces are not drift', () => {
  assert.deepEqual(compareCopies(ours({ brand: null, category: null }), theirs({ brand: '', category: '  ' })), []);
  assert.deepEqual(compareCopies(ours(), theirs({ name: ' Blue mug ', brand: 'Acme ' })), []);
  assert.deepEqual(
    compareCopies(ours(), theirs({ name: 'blue mug' })),
    [{ field: 'name', ours: 'Blue mug', theirs: 'blue mug' }],
    'case is kept',
  );
});

test('what we send in place of a field we do not hold is not drift', () => {
  // Meta requires a description and a condition: the adapter sends the name and `new`.
  assert.deepEqual(compareCopies(ours({ description: null }), theirs({ description: 'Blue mug' })), []);
  assert.deepEqual(compareCopies(ours({ description: null }), theirs({ description: null })), []);
  assert.deepEqual(compareCopies(ours({ condition: null }), theirs({ condition: 'new' })), []);
  assert.deepEqual(compareCopies(ours({ description: null }), theirs({ description: 'Changed there' })), [
    { field: 'description', ours: null, theirs: 'Changed there' },
  ]);
});

test('a required platform field not read back is not compared; an optional one cleared there is drift', () => {
  assert.deepEqual(compareCopies(ours(), theirs({ name: null, price: null, currency: null, availability: null, condition: null })), []);
  assert.deepEqual(compareCopies(ours({ salePrice: 900 }), theirs({ salePrice: '' })), [{ field: 'sale_price', ours: 900, theirs: null }]);
  assert.deepEqual(compareCopies(ours({ salePrice: null }), theirs({ salePrice: '9.00 USD' })), [
    { field: 'sale_price', ours: null, theirs: 900 },
  ]);
});

test('prices are read from every form the platform shows', () => {
  assert.deepEqual(priceOf('12.50 USD'), { amount: 1250, currency: 'USD' });
  assert.deepEqual(priceOf('USD 12.5'), { amount: 1250, currency: 'USD' });
  assert.deepEqual(priceOf('$1,234.05'), { amount: 123405, currency: null });
  assert.deepEqual(priceOf(700), { amount: 700, currency: null });
  assert.equal(priceOf('free'), null);
  assert.equal(priceOf(null), null);
  assert.equal(priceOf(-5), null);
});

test('the same drift found in another order is the same drift; another value is not', () => {
  const a = [
    { field: 'price', ours: 1250, theirs: 999 },
    { field: 'name', ours: 'A', theirs: 'B' },
  ];
  assert.ok(sameDrift(a, [...a].reverse()));
  assert.ok(!sameDrift(a, [{ field: 'price', ours: 1250, theirs: 998 }, a[1]]));
  assert.ok(!sameDrift(a, a.slice(0, 1)));
  assert.ok(!sameDrift(null, a));
  assert.ok(sameDrift(null, []));
});

test('a pull-in takes the platform values our rules accept and keeps the rest ours', () => {
  const drift = compareCopies(
    ours({ condition: 'new' }),
    theirs({ price: '9.99 USD', availability: 'pending', condition: 'used', brand: null, description: 'x'.repeat(6000) }),
  );
  const { changes, kept } = pullInChanges(drift);
  assert.deepEqual(changes, { price: 999, condition: 'used', brand: null });
  assert.deepEqual(
    kept.map((d) => d.field),
    ['description', 'availability'],
    "a 6,000-character description and Meta's `pending` cannot be stored",
  );
  assert.deepEqual(
    pullInChanges([{ field: 'name', ours: 'A', theirs: 'n'.repeat(150) }]).kept.length,
    1,
    'Meta takes 200 characters, we 100',
  );
  assert.deepEqual(pullInChanges([{ field: 'availability', ours: 'in stock', theirs: 'out of stock' }]).changes, {
    availability: 'out of stock',
  });
});
