import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { validateMessage } from '../../simulator/whatsapp-validate.js';
import { orderProblem } from '../../simulator/whatsapp-inbound.js';
import { parseWhatsAppWebhook } from '../../providers/whatsapp-cloud/webhook.js';
import type { ChatOrderMessage } from '../../providers/types.js';
import { catalogueInteractive, productListInteractive, singleProductInteractive } from '../../domain/catalogues/product-messages.js';
import { orderLines } from '../../services/orders/chat-orders.js';

// Product messages as the simulator judges them (the Cloud API's synchronous checks), the inbound
// order control's input, the adapter's reading of an order webhook, and the payload builders.

const vctx = { templates: new Map(), strictTemplates: false };
const send = (interactive: Record<string, unknown>) =>
  validateMessage({ messaging_product: 'whatsapp', to: '255700111222', type: 'interactive', interactive }, vctx);
const refusal = (interactive: Record<string, unknown>) => {
  const r = send(interactive);
  assert.equal(r.ok, false, `expected a refusal of ${JSON.stringify(interactive)}`);
  return r.ok ? null : r.problem;
};
const section = (title: string, n: number, from = 0) => ({
  title,
  product_items: Array.from({ length: n }, (_, i) => ({ product_retailer_id: `SKU-${from + i}` })),
});

test('simulator: a single product needs catalog_id and product_retailer_id; body and footer within limits; no header', () => {
  assert.ok(send(singleProductInteractive({ catalogueId: '190001', retailerId: 'A-1' })).ok);
  assert.ok(
    send(singleProductInteractive({ catalogueId: '190001', retailerId: 'A-1', body: 'b'.repeat(1024), footer: 'f'.repeat(60) })).ok,
  );
  assert.equal(refusal({ type: 'product', action: { product_retailer_id: 'A-1' } })?.code, 131008);
  assert.equal(refusal({ type: 'product', action: { catalog_id: '190001' } })?.code, 131008);
  assert.equal(
    refusal({ type: 'product', body: { text: 'b'.repeat(1025) }, action: { catalog_id: '1', product_retailer_id: 'A' } })?.code,
    131009,
  );
  assert.equal(
    refusal({ type: 'product', footer: { text: 'f'.repeat(61) }, action: { catalog_id: '1', product_retailer_id: 'A' } })?.code,
    131009,
  );
  assert.equal(
    refusal({ type: 'product', header: { type: 'text', text: 'h' }, action: { catalog_id: '1', product_retailer_id: 'A' } })?.code,
    100,
  );
});

test('simulator: a product list needs a text header, a body, 1 to 10 titled sections and at most 30 products', () => {
  const list = (sections: unknown[], extra: Record<string, unknown> = {}) => ({
    type: 'product_list',
    header: { type: 'text', text: 'Our picks' },
    body: { text: 'Have a look' },
    action: { catalog_id: '190001', sections },
    ...extra,
  });
  assert.ok(send(list([section('Tea', 20), section('Cups', 10, 20)])).ok);
  assert.ok(
    send(
      productListInteractive({
        catalogueId: '190001',
        headerText: 'h'.repeat(60),
        body: 'b',
        footer: 'f',
        sections: [{ title: 't'.repeat(24), retailerIds: ['A'] }],
      }),
    ).ok,
  );
  assert.match(refusal(list([section('Tea', 20), section('Cups', 11, 20)]))!.details, /at most 30 products/);
  assert.equal(refusal(list([]))?.code, 131009);
  assert.equal(refusal(list(Array.from({ length: 11 }, (_, i) => section(`S${i}`, 1, i))))?.code, 131009);
  assert.equal(refusal(list([section('t'.repeat(25), 1)]))?.code, 131009);
  assert.equal(refusal(list([{ product_items: [{ product_retailer_id: 'A' }] }]))?.code, 131008, 'a section title is required');
  assert.equal(refusal({ ...list([section('Tea', 1)]), header: undefined })?.code, 131008, 'the header is required');
  assert.equal(refusal(list([section('Tea', 1)], { header: { type: 'image', image: { link: 'https://x/a.jpg' } } }))?.code, 100);
  assert.equal(refusal(list([section('Tea', 1)], { header: { type: 'text', text: 'h'.repeat(61) } }))?.code, 131009);
  assert.equal(refusal(list([section('Tea', 1)], { body: undefined }))?.code, 131008, 'the body is required');
});

test('simulator: a catalogue message needs a body and the catalog_message action; the thumbnail is optional', () => {
  assert.ok(send(catalogueInteractive({ body: 'Browse' })).ok);
  assert.ok(send(catalogueInteractive({ body: 'Browse', footer: 'f', thumbnailRetailerId: 'A-1' })).ok);
  assert.equal(refusal({ type: 'catalog_message', action: { name: 'catalog_message' } })?.code, 131008);
  assert.equal(refusal({ type: 'catalog_message', body: { text: 'b' }, action: { name: 'catalog' } })?.code, 100);
  assert.equal(
    refusal({
      type: 'catalog_message',
      body: { text: 'b' },
      action: { name: 'catalog_message', parameters: { thumbnail_product_retailer_id: 7 } },
    })?.code,
    100,
  );
});

test('simulator: the inbound order control takes the Cloud API order shape only', () => {
  const order = {
    catalog_id: '190001',
    text: 'asap',
    product_items: [{ product_retailer_id: 'A-1', quantity: 2, item_price: 30, currency: 'USD' }],
  };
  assert.equal(orderProblem(order), null);
  assert.match(orderProblem({ ...order, catalog_id: 'abc' })!, /catalog_id/);
  assert.match(orderProblem({ ...order, product_items: [] })!, /product_items/);
  assert.match(orderProblem({ ...order, product_items: [{ ...order.product_items[0], quantity: 0 }] })!, /quantity/);
  assert.match(orderProblem({ ...order, product_items: [{ ...order.product_items[0], item_price: '30' }] })!, /item_price/);
  assert.match(orderProblem({ ...order, product_items: [{ ...order.product_items[0], currency: 'usd' }] })!, /currency/);
});

test('adapter: an order webhook is an order event carrying the inbound message and the lines in major units', () => {
  const body = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'WABA',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550001111', phone_number_id: '1234567' },
              contacts: [{ profile: { name: 'Jane' }, wa_id: '255700111222' }],
              messages: [
                {
                  from: '255700111222',
                  id: 'wamid.ORDER1',
                  timestamp: '1700000000',
                  type: 'order',
                  order: {
                    catalog_id: '190001',
                    text: 'gift wrap',
                    product_items: [
                      { product_retailer_id: 'A-1', quantity: 2, item_price: 19.99, currency: 'usd' },
                      { product_retailer_id: 'B-2', quantity: '1', item_price: '5', currency: 'USD' },
                      { product_retailer_id: 'C-3', quantity: 0, item_price: 1, currency: 'USD' },
                      { quantity: 1, item_price: 1, currency: 'USD' },
                    ],
                  },
                },
              ],
            },
          },
        ],
      },
    ],
  };
  const rawBody = Buffer.from(JSON.stringify(body));
  const headers = { 'x-hub-signature-256': `sha256=${createHmac('sha256', 's').update(rawBody).digest('hex')}` };
  const [e] = parseWhatsAppWebhook({ url: '/providers/whatsapp/webhook', headers, rawBody }) as ChatOrderMessage[];
  assert.equal(e.type, 'order');
  assert.equal(e.providerMessageId, 'wamid.ORDER1');
  assert.deepEqual(e.businessNumber, { phoneNumberId: '1234567' });
  assert.equal(e.body, 'gift wrap');
  assert.deepEqual(e.order, {
    catalogueId: '190001',
    text: 'gift wrap',
    items: [
      { retailerId: 'A-1', quantity: 2, itemPrice: 19.99, currency: 'USD' },
      { retailerId: 'B-2', quantity: 1, itemPrice: 5, currency: 'USD' },
    ],
  });
  assert.equal((e.metadata?.order as { catalog_id: string }).catalog_id, '190001');
  // Major units become hundredths without float drift, at the currency's own precision.
  assert.deepEqual(
    orderLines(e).map((l) => l.unitPriceMinor),
    [1999, 500],
  );
  const yen = orderLines({ ...e, order: { ...e.order, items: [{ retailerId: 'J', quantity: 1, itemPrice: 300, currency: 'JPY' }] } });
  assert.equal(yen[0].unitPriceMinor, 30000);
  const none = orderLines({ ...e, order: { ...e.order, items: [{ retailerId: 'J', quantity: 1, itemPrice: null, currency: null }] } });
  assert.equal(none[0].unitPriceMinor, null, 'no readable price: the shop’s price stands in');
});
