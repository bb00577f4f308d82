import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer, { type Page } from 'puppeteer-core';
import { openShop, coffee as coffeeBody, tea as teaBody, form } from '../support/shop.js';
import { admin, api, eventually, newTenant, type Tenant } from '../support/stack.js';
import { chromiumPath } from '../../scripts/browser.js';

// The shop page in a real browser (Debian's chromium through puppeteer-core) on a phone screen:
// open the link, pick a size and an add-on, add to the basket, add another product from the menu,
// write a note, submit: an order with the service's prices, the basket ordered, cart.submitted.
// On the way: amounts in the currency's format, a sale price beside the regular one, a disabled
// button that looks it, a picture that loads and one that does not, the same page on a desktop
// screen (screenshots of both under test/artifacts/). Then forms posted by hand: amounts in them
// change nothing.

const C = '/api/v3/catalogues';
const root = path.resolve(import.meta.dirname, '../..');
/** Product pictures, answered by the browser test itself: coffee's is a PNG, tea's fails. */
const IMAGES = 'https://images.example.com';
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGNkYGD4z8DAwMDEwMDAAAAK3gEDa4ZsKQAAAABJRU5ErkJggg==',
  'base64',
);
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1280, height: 800 };

/** What both widths must show: the shop's name, the basket link, the menu's cards, the basket; and nothing wider than the screen. */
async function assertRendered(page: Page, width: number) {
  const seen = await page.evaluate(() => ({
    title: document.querySelector('header h1')?.textContent,
    basket: document.querySelector('#basket-link')?.getBoundingClientRect().width ?? 0,
    cards: [...document.querySelectorAll('.product')].map((e) => e.getBoundingClientRect().width),
    subtotal: document.querySelector('#subtotal')?.textContent,
    scroll: document.documentElement.scrollWidth,
  }));
  assert.equal(seen.title, 'Mama Café');
  assert.ok(seen.basket > 0, 'the basket link is drawn');
  assert.ok(seen.cards.length >= 2 && seen.cards.every((w) => w > 200 && w <= width), `cards: ${seen.cards.join(', ')}`);
  assert.ok(seen.subtotal, 'the subtotal is drawn');
  assert.ok(seen.scroll <= width, `the page scrolls sideways at ${width}px`);
}

/** A full-page screenshot under test/artifacts/ (ignored by git), its path printed. */
async function screenshot(t: TestContext, page: Page, name: string) {
  const dir = path.join(root, 'test', 'artifacts');
  fs.mkdirSync(dir, { recursive: true });
  const shot = path.join(dir, `${name}-${Date.now()}.png`);
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: shot, fullPage: true });
  t.diagnostic(`screenshot: ${shot}`);
  process.stdout.write(`shop page screenshot: ${shot}\n`);
}

async function shop(t: Tenant) {
  const { shop: s, product } = await openShop(t, 'Mama Café');
  const coffee = await product(coffeeBody({ description: 'Fresh from the hills', image_url: `${IMAGES}/coffee.png` }));
  // Its picture never loads (the browser test refuses it): the frame must still hold.
  const tea = await product({ ...teaBody, image_url: `${IMAGES}/tea.png` });
  const cake = await product({ sku: 'CAKE', name: 'Cake', price: 500, category: 'Bakery', addons: [{ name: 'Cream', price: 60 }] });
  return { shop: s, coffee, tea, cake };
}

test('the shop page on a phone: size, add-on, basket, note, submit → an order priced by the service', async (t) => {
  const executablePath = chromiumPath();
  assert.ok(executablePath, 'chromium is not installed (scripts/test.ts installs it when it runs this file)');
  const tenant = await newTenant();
  const { coffee } = await shop(tenant);
  const large = coffee.variants.find((v: any) => v.name === 'Large');
  const oat = coffee.addons.find((a: any) => a.name === 'Oat milk');
  const linked = await api('POST', '/api/v3/shop-links', tenant.token, { sku: 'COF' });
  assert.equal(linked.status, 201, linked.text);
  const { link, cart } = linked.body.data;

  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage();
    await page.setViewport({ ...PHONE, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) blocked.push(m.text());
    });
    await page.setRequestInterception(true);
    page.on('request', (r) => {
      if (!r.url().startsWith(IMAGES)) return void r.continue();
      if (r.url().endsWith('/coffee.png')) return void r.respond({ status: 200, contentType: 'image/png', body: PNG });
      return void r.respond({ status: 404, contentType: 'text/plain', body: 'gone' });
    });
    await page.goto(link, { waitUntil: 'load' });
    // The link opens on the product, the basket empty: its send button is disabled and looks it.
    await page.waitForSelector('#product');
    // (No named functions inside evaluate: tsx's names would not exist in the page.)
    const [add, submit] = await page.evaluate(() =>
      ['#add', '#submit'].map((sel) => {
        const el = document.querySelector<HTMLButtonElement>(sel)!;
        const st = getComputedStyle(el);
        return { disabled: el.disabled, background: st.backgroundColor, cursor: st.cursor };
      }),
    );
    const buttons = { add, submit, why: await page.$eval('#submit-why', (el) => el.textContent) };
    assert.equal(buttons.submit.disabled, true);
    assert.notEqual(buttons.submit.background, buttons.add.background, 'a disabled button does not look like an enabled one');
    assert.equal(buttons.submit.cursor, 'not-allowed');
    assert.match(buttons.why ?? '', /Add something to your basket/);
    // Pick Large and oat milk, two of them, a note for the line.
    await page.click(`input[name=variant_id][value="${large.id}"]`);
    await page.click(`input[name=addon_id][value="${oat.id}"]`);
    await page.$eval('input[name=quantity]', (el) => ((el as HTMLInputElement).value = '2'));
    await page.type('input[name=note]', 'no sugar');
    await Promise.all([page.waitForNavigation(), page.click('#add')]);
    assert.match(await page.$eval('#basket', (el) => el.textContent ?? ''), /2 × Coffee \(Large\)[\s\S]*Oat milk[\s\S]*no sugar/);
    // Amounts in hundredths, written as the currency is (Intl, the currency's own digits).
    assert.equal(await page.$eval('#subtotal', (el) => el.textContent), '$10.00');
    assert.equal(await page.$eval('#basket-link', (el) => el.textContent), 'Basket (2) · $10.00');

    // Back to the menu, the Hot Drinks category: Tea on sale, its regular price struck out beside it.
    await Promise.all([page.waitForNavigation(), page.click('a[href$="?menu=1"]')]);
    await Promise.all([page.waitForNavigation(), page.click('nav a[href*="category=hot-drinks"]')]);
    assert.deepEqual(await page.$$eval('.product', (els) => els.map((e) => e.getAttribute('data-sku'))), ['COF', 'TEA']);
    const teaPrice = await page.$eval('.product[data-sku="TEA"] .price', (el) => ({
      was: el.querySelector('s.was')?.textContent,
      now: el.querySelector('.now')?.textContent,
      struck: el.querySelector('s.was') ? getComputedStyle(el.querySelector('s.was')!).textDecorationLine : '',
    }));
    assert.deepEqual(teaPrice, { was: 'Was $2.00', now: 'now $1.50', struck: 'line-through' });
    // Pictures: coffee's loads; tea's fails and its frame holds, showing the name instead of a broken icon.
    await page.waitForFunction(() => [...document.images].every((i) => i.complete));
    const pictures = await page.$$eval('.product', (els) =>
      els.map((e) => {
        const img = e.querySelector('img')!;
        const frame = img.parentElement!.getBoundingClientRect();
        return {
          sku: e.getAttribute('data-sku'),
          loaded: img.naturalWidth > 0,
          alt: img.alt,
          frame: [Math.round(frame.width), Math.round(frame.height)],
        };
      }),
    );
    assert.deepEqual(pictures, [
      { sku: 'COF', loaded: true, alt: 'Coffee', frame: [64, 48] },
      { sku: 'TEA', loaded: false, alt: 'Tea', frame: [64, 48] },
    ]);
    await assertRendered(page, PHONE.width);
    // The product's name opens the product.
    await Promise.all([page.waitForNavigation(), page.click('.product[data-sku="TEA"] a.name')]);
    assert.equal(await page.$eval('#product h2', (el) => el.textContent), 'Tea');
    await Promise.all([page.waitForNavigation(), page.click('#add')]);
    assert.equal(await page.$eval('#subtotal', (el) => el.textContent), '$11.50');

    await page.type('#note', 'Table 4 <script>alert(1)</script>');
    await screenshot(t, page, 'shop-page-phone');

    // The same basket on a desktop screen: the page keeps its column and draws everything.
    const desktop = await browser.newPage();
    await desktop.setRequestInterception(true);
    desktop.on('request', (r) =>
      r.url().startsWith(IMAGES) ? void r.respond({ status: 404, contentType: 'text/plain', body: 'gone' }) : void r.continue(),
    );
    await desktop.setViewport(DESKTOP);
    await desktop.goto(`${link}?category=hot-drinks`, { waitUntil: 'load' });
    await assertRendered(desktop, DESKTOP.width);
    assert.ok((await desktop.$eval('main', (el) => el.getBoundingClientRect().width)) <= 640, 'one readable column');
    await screenshot(t, desktop, 'shop-page-desktop');
    await desktop.close();

    await Promise.all([page.waitForNavigation(), page.click('#submit')]);
    await page.waitForSelector('#ordered');
    assert.equal(await page.$('#add'), null, 'an ordered basket offers nothing to add');
    // The note came back escaped, as text.
    assert.equal(await page.$('#basket script'), null);
    assert.deepEqual(blocked, [], 'the page needs nothing its policy refuses');
    await screenshot(t, page, 'shop-page-ordered');
  } finally {
    await browser.close();
  }

  const after = (await api('GET', `/api/v3/carts/${cart.ref}`, tenant.token)).body.data;
  assert.equal(after.status, 'ordered');
  assert.ok(after.order_id);
  assert.equal(after.note, 'Table 4 <script>alert(1)</script>');
  assert.equal(after.subtotal_minor, 1150);
  const read = await api('GET', `${C}/orders/${after.order_id}`, tenant.token);
  assert.equal(read.status, 200, read.text);
  const order = read.body.data;
  assert.equal(order.total_amount, 1150);
  assert.deepEqual([order.platform, order.cart_id, order.note], ['storefront', cart.id, 'Table 4 <script>alert(1)</script>']);
  assert.deepEqual(
    order.product_items.map((l: any) => [l.product_retailer_id, l.quantity, l.item_price]),
    [
      ['COF', 2, 500],
      ['TEA', 1, 150],
    ],
  );
  const events = await eventually(
    () => admin('GET', `/accounts/${tenant.accountId}/events?kind=cart.submitted`),
    (x) => x.body.data.length === 1,
  );
  assert.equal(events.body.data[0].cart_id, cart.id);
  assert.equal(events.body.data[0].status, 'ordered');
  assert.equal(events.body.data[0].order_id, after.order_id);
  // Submitted once: a second submit is refused and makes no second order.
  const again = await form(link, '/submit', '');
  assert.equal(again.status, 409);
});

test('forms posted by hand: a tampered amount changes nothing; foreign sizes and add-ons, bad quantities are refused', async () => {
  const tenant = await newTenant();
  const { tea, coffee, cake } = await shop(tenant);
  const { link, cart } = (await api('POST', '/api/v3/shop-links', tenant.token, {})).body.data;
  const added = await form(
    link,
    '/items',
    `product_id=${tea.id}&quantity=2&price=1&unit_price_minor=1&item_price=1&subtotal_minor=1&line_total_minor=1`,
  );
  assert.equal(added.status, 303, added.text);
  assert.match(added.location ?? '', new RegExp(`^/shop/${cart.ref}/`));
  const read = async () => (await api('GET', `/api/v3/carts/${cart.ref}`, tenant.token)).body.data;
  let c = await read();
  assert.deepEqual(
    c.items.map((i: any) => [i.sku, i.quantity, i.unit_price_minor]),
    [['TEA', 2, 150]],
  );
  assert.equal(c.subtotal_minor, 300);

  const refusals = [
    `product_id=${coffee.id}&variant_id=${coffee.variants[0].id + 100000}&quantity=1`,
    `product_id=${coffee.id}&addon_id=${cake.addons[0].id}&quantity=1`,
    `product_id=${coffee.id}&variant_id=abc&quantity=1`,
    `product_id=${tea.id}&quantity=0`,
    `product_id=${tea.id}&quantity=-1`,
    `product_id=${tea.id}&quantity=1000`,
    `product_id=999999999&quantity=1`,
  ];
  for (const body of refusals) {
    const r = await form(link, '/items', body);
    assert.equal(r.status, 422, `${body}: ${r.status}`);
    assert.match(r.text, /id="error"/);
  }
  c = await read();
  assert.equal(c.items.length, 1, 'nothing half-written');

  const submitted = await form(link, '/submit', 'note=hi&total_amount=1&subtotal_minor=1&price=1');
  assert.equal(submitted.status, 303);
  c = await read();
  assert.equal(c.status, 'ordered');
  const order = (await api('GET', `${C}/orders/${c.order_id}`, tenant.token)).body.data;
  assert.equal(order.total_amount, 300);
  // Another tenant's basket page is its link alone; a wrong key is 404 for the POSTs too.
  const forged = await form(link.replace(/\/[^/]+$/, '/BBBBBBBBBBBBBBBBBBBBBB'), '/items', `product_id=${tea.id}&quantity=1`);
  assert.equal(forged.status, 404);
});
