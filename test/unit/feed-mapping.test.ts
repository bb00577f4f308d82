import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  availabilityOf,
  conditionOf,
  detectDelimiter,
  guessMapping,
  mapRecord,
  normaliseHeader,
  parsePrice,
  shrinkRefusal,
  sniffFormat,
} from '../../domain/catalogues/feed-mapping.js';
import { FeedSplitError, JsonArraySplitter, XmlItemSplitter } from '../../domain/catalogues/feed-split.js';

test('headers are compared without namespace prefix, case, BOM or punctuation', () => {
  assert.equal(normaliseHeader('g:price'), 'price');
  assert.equal(normaliseHeader('\uFEFFVariant SKU'), 'variant_sku');
  assert.equal(normaliseHeader('image[0].url'), 'image_0_url');
  assert.equal(normaliseHeader(' Body (HTML) '), 'body_html');
});

test('guessMapping: Meta CSV header, our names first, one column per field, the rest unmapped', () => {
  const headers = ['id', 'title', 'description', 'availability', 'condition', 'price', 'link', 'image_link', 'brand', 'sale_price', 'name'];
  const g = guessMapping(headers);
  assert.deepEqual(g.mapping, {
    id: 'sku',
    // our own field name wins over Meta's title
    name: 'name',
    title: null,
    description: 'description',
    availability: 'availability',
    condition: 'condition',
    price: 'price',
    link: null,
    image_link: 'image_url',
    brand: 'brand',
    sale_price: 'sale_price',
  });
  assert.deepEqual(g.unmapped, ['title', 'link']);
  assert.deepEqual(g.missing, []);
});

test('guessMapping: Google RSS elements with the g: prefix, Shopify export aliases', () => {
  const rss = guessMapping(['g:id', 'g:title', 'g:price', 'g:availability', 'g:image_link', 'g:google_product_category', 'title']);
  assert.deepEqual(rss.mapping, {
    'g:id': 'sku',
    'g:title': 'name',
    title: 'name',
    'g:price': 'price',
    'g:availability': 'availability',
    'g:image_link': 'image_url',
    'g:google_product_category': 'category',
  });
  const shopify = guessMapping([
    'Handle',
    'Title',
    'Body (HTML)',
    'Vendor',
    'Variant SKU',
    'Variant Price',
    'Variant Inventory Qty',
    'Image Src',
  ]);
  assert.deepEqual(shopify.mapping, {
    Handle: null,
    Title: 'name',
    'Body (HTML)': 'description',
    Vendor: 'brand',
    'Variant SKU': 'sku',
    'Variant Price': 'price',
    'Variant Inventory Qty': 'inventory',
    'Image Src': 'image_url',
  });
});

test('guessMapping: the saved mapping wins, a saved null keeps a column out, saved columns the file lacks are kept', () => {
  const g = guessMapping(['Artikel', 'title', 'Preis', 'price'], { Artikel: 'sku', Preis: 'price', title: null, gone: 'brand' });
  assert.deepEqual(g.mapping, { Artikel: 'sku', Preis: 'price', title: null, gone: 'brand', price: null });
  assert.deepEqual(g.missing, ['name']);
  assert.deepEqual(guessMapping(['sku']).missing, ['name', 'price']);
});

test('parsePrice: amount and currency in the shapes feeds write', () => {
  const cases: Array<[unknown, number, string | null]> = [
    ['9.99 USD', 999, 'USD'],
    ['USD 9.99', 999, 'USD'],
    ['9,99 EUR', 999, 'EUR'],
    ['€9,99', 999, 'EUR'],
    ['$9.99', 999, 'USD'],
    ['£5', 500, 'GBP'],
    ['1,234.50 USD', 123450, 'USD'],
    ['1.234,50 EUR', 123450, 'EUR'],
    ['1 234,50', 123450, null],
    ['1,234', 123400, null],
    ['10', 1000, null],
    ['0.5', 50, null],
    ['12.000', 1200, null],
    [9.99, 999, null],
    [0, 0, null],
    ['15.00 usd', 1500, 'USD'],
  ];
  for (const [input, amount, currency] of cases) assert.deepEqual(parsePrice(input), { amount, currency }, String(input));
  assert.deepEqual(parsePrice('$12', { defaultCurrency: 'CAD' }), { amount: 1200, currency: 'CAD' });
  assert.deepEqual(parsePrice('$12', { defaultCurrency: 'EUR' }), { amount: 1200, currency: 'USD' });
  for (const bad of ['abc', '', '-5 USD', '9.999', '1.2.3', 'USD', 9.999, -1, NaN, '€5 USD'])
    assert.ok('problem' in parsePrice(bad), `${String(bad)} is refused`);
});

test('availability and condition words of Meta, Google and schema.org', () => {
  for (const w of ['in stock', 'in_stock', 'InStock', 'instock', 'available', 'https://schema.org/InStock'])
    assert.equal(availabilityOf(w), 'in stock', w);
  for (const w of ['out of stock', 'out_of_stock', 'Sold out']) assert.equal(availabilityOf(w), 'out of stock', w);
  assert.equal(availabilityOf('preorder'), 'preorder');
  assert.equal(availabilityOf('pre-order'), 'preorder');
  assert.equal(availabilityOf('backorder'), 'available for order');
  assert.equal(availabilityOf('available for order'), 'available for order');
  assert.equal(availabilityOf('discontinued'), 'discontinued');
  assert.equal(availabilityOf('maybe'), null);
  assert.equal(conditionOf('NewCondition'), 'new');
  assert.equal(conditionOf('pre-owned'), 'used');
  assert.equal(conditionOf('Refurbished'), 'refurbished');
  assert.equal(conditionOf('mint'), null);
});

test('mapRecord: values converted, empty cells left out, bad values kept for the ingest to refuse, relative images resolved', () => {
  const mapping = guessMapping(['id', 'title', 'price', 'sale_price', 'availability', 'quantity', 'image_link', 'brand', 'extra']).mapping;
  const ok = mapRecord(
    {
      id: 'SKU-1',
      title: ' Mug ',
      price: '9.99 USD',
      sale_price: '7.50 USD',
      availability: 'in_stock',
      quantity: '12',
      image_link: '/img/1.jpg',
      brand: '',
      extra: 'x',
    },
    mapping,
    { baseUrl: 'https://shop.example/feed.csv' },
  );
  assert.deepEqual(ok.problems, []);
  assert.deepEqual(ok.data, {
    sku: 'SKU-1',
    name: 'Mug',
    price: 999,
    sale_price: 750,
    currency: 'USD',
    image_url: 'https://shop.example/img/1.jpg',
    availability: 'in stock',
    inventory: 12,
  });
  const bad = mapRecord({ id: 7, title: 'T\u0000ea', price: 'ask us', availability: 'maybe', quantity: '-3' }, mapping);
  assert.deepEqual(bad.data, { sku: '7', name: 'Tea', price: 'ask us', availability: 'maybe', inventory: '-3' });
  assert.deepEqual(
    bad.problems.map((p) => p.field),
    ['price', 'availability', 'inventory'],
  );
  const json = mapRecord(
    { sku: 'A', name: 'B', price: { amount: 12.5, currency: 'eur' }, image_url: [{ url: 'https://x/y.png' }] },
    guessMapping(['sku', 'name', 'price', 'image_url']).mapping,
  );
  assert.deepEqual(json.data, { sku: 'A', name: 'B', price: 1250, currency: 'EUR', image_url: 'https://x/y.png' });
  const clash = mapRecord({ price: '5 USD', currency: 'EUR', name: 'x' }, guessMapping(['price', 'currency', 'name']).mapping);
  assert.deepEqual(clash.problems, [{ field: 'currency', reason: 'price is in USD, currency says EUR' }]);
});

test('detectDelimiter: the most frequent candidate outside quotes, comma by default', () => {
  assert.equal(detectDelimiter('id,title,price\n1,a,2'), ',');
  assert.equal(detectDelimiter('id;title;price;"a,b,c,d"'), ';');
  assert.equal(detectDelimiter('\uFEFFid\ttitle\tprice'), '\t');
  assert.equal(detectDelimiter('id|title|price'), '|');
  assert.equal(detectDelimiter('id~title~price'), '~');
  assert.equal(detectDelimiter('single'), ',');
});

test('sniffFormat: the bytes decide; an HTML page is never a feed', () => {
  assert.equal(sniffFormat('<?xml version="1.0"?><rss>'), 'xml');
  assert.equal(sniffFormat('\uFEFF  <feed xmlns="http://www.w3.org/2005/Atom">'), 'xml');
  assert.equal(sniffFormat('<!DOCTYPE html><html>'), 'html');
  assert.equal(sniffFormat('<html lang="en">'), 'html');
  assert.equal(sniffFormat('<div>Not found</div>', 'text/html; charset=utf-8'), 'html');
  assert.equal(sniffFormat('<rss version="2.0">', 'text/html'), 'xml');
  assert.equal(sniffFormat('[{"sku":1}]'), 'json');
  assert.equal(sniffFormat('{"products":[]}', 'text/plain'), 'json');
  assert.equal(sniffFormat('id,title,price\n', 'text/html'), 'csv');
});

test('shrinkRefusal: an empty replace pull, or one with less than half of the last (≥ 20) rows, is refused; upsert never', () => {
  assert.match(shrinkRefusal('replace', 0, null)!, /no usable products/);
  assert.match(shrinkRefusal('replace', 9, 20)!, /shrank from 20 to 9/);
  assert.equal(shrinkRefusal('replace', 10, 20), null);
  assert.equal(shrinkRefusal('replace', 1, 19), null);
  assert.equal(shrinkRefusal('replace', 5, null), null);
  assert.equal(shrinkRefusal('upsert', 0, 1000), null);
});

/** Feeds a body to a splitter in pieces of `size` characters. */
function split<S extends { push(t: string): string[]; end(): string[] | void }>(s: S, body: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < body.length; i += size) out.push(...s.push(body.slice(i, i + size)));
  out.push(...(s.end() ?? []));
  return out;
}

test('XmlItemSplitter: RSS items with the g: namespace, CDATA holding </item>, any chunk boundary', () => {
  const rss =
    '<?xml version="1.0"?><rss xmlns:g="http://base.google.com/ns/1.0" version="2.0"><channel><title>Shop</title>' +
    '<item><g:id>1</g:id><title>Mug</title><g:price>9.99 USD</g:price></item>\n' +
    '<item><g:id>2</g:id><description><![CDATA[a </item> inside <b>text</b>]]></description><!-- </item> --></item>' +
    '<items>not one</items><item/></channel></rss>';
  const expected = [
    '<item><g:id>1</g:id><title>Mug</title><g:price>9.99 USD</g:price></item>',
    '<item><g:id>2</g:id><description><![CDATA[a </item> inside <b>text</b>]]></description><!-- </item> --></item>',
    '<item/>',
  ];
  for (const size of [1, 2, 3, 7, 50, 10_000]) assert.deepEqual(split(new XmlItemSplitter(), rss, size), expected, `chunks of ${size}`);
  const atom =
    '<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title><entry><title type="text">A</title></entry><entry><title>B</title></entry></feed>';
  assert.deepEqual(split(new XmlItemSplitter(), atom, 5), [
    '<entry><title type="text">A</title></entry>',
    '<entry><title>B</title></entry>',
  ]);
  assert.deepEqual(split(new XmlItemSplitter(), '<rss><channel></channel></rss>', 4), []);
  assert.deepEqual(split(new XmlItemSplitter(), '<products><product><id>1</id></product>', 3), ['<product><id>1</id></product>']);
  assert.throws(() => split(new XmlItemSplitter(), '<Error><Code>AccessDenied</Code></Error>', 8), FeedSplitError);
  assert.throws(() => split(new XmlItemSplitter(), '<rss><channel><item><title>cut', 8), /ends inside/);
});

test('JsonArraySplitter: a root array, or products/items of a root object, strings with brackets, any chunk boundary', () => {
  const body =
    '\uFEFF{"meta":{"products":[9]},"note":"[x]","products":[{"sku":"a","name":"x, \\"y\\" ]"}, {"sku":"b","tags":[1,[2]]},"str",3 ],"after":[1]}';
  const expected = ['{"sku":"a","name":"x, \\"y\\" ]"}', '{"sku":"b","tags":[1,[2]]}', '"str"', '3'];
  for (const size of [1, 2, 5, 13, 10_000]) assert.deepEqual(split(new JsonArraySplitter(), body, size), expected, `chunks of ${size}`);
  assert.deepEqual(split(new JsonArraySplitter(), ' [ {"a":1} , {"b":"}"} ] ', 3), ['{"a":1}', '{"b":"}"}']);
  assert.deepEqual(split(new JsonArraySplitter(), '{"items":[]}', 3), []);
  assert.throws(() => split(new JsonArraySplitter(), '{"rows":[{"a":1}]}', 3), /no product array/);
  assert.throws(() => split(new JsonArraySplitter(), '[{"a":1}', 3), /ends inside/);
  assert.throws(() => split(new JsonArraySplitter(), 'id,name', 3), /neither an array nor an object/);
});
