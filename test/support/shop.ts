import assert from 'node:assert/strict';
import { api, type Tenant } from './stack.js';

// What the shop tests share: a shop on no platform, a way to add products to it, and the coffee
// every menu starts with (two sizes, two add-ons), so prices in their assertions agree.

const C = '/api/v3/catalogues';

/** A shop of the tenant's, and a function that adds a product to it (201 or the test fails). */
export async function openShop(t: Tenant, name: string) {
  const shop = (await api('POST', C, t.token, { name, default_currency: 'USD', channels: [] })).body.data;
  const product = async (body: Record<string, unknown>) => {
    const r = await api('POST', `${C}/${shop.id}/products`, t.token, body);
    assert.equal(r.status, 201, r.text);
    return r.body.data;
  };
  return { shop, product };
}

/** Coffee: 300 (Small 300, Large 450), add-ons Oat milk 50 and Extra shot 80, in Hot Drinks. */
export const coffee = (extra: Record<string, unknown> = {}) => ({
  sku: 'COF',
  name: 'Coffee',
  price: 300,
  category: 'Hot Drinks',
  variants: [
    { name: 'Small', price: 300 },
    { name: 'Large', price: 450 },
  ],
  addons: [
    { name: 'Oat milk', price: 50 },
    { name: 'Extra shot', price: 80 },
  ],
  ...extra,
});

/** Tea: 200, on sale at 150, in Hot Drinks. */
export const tea = { sku: 'TEA', name: 'Tea', price: 200, sale_price: 150, category: 'Hot Drinks' };

/** A form post as the shop page sends it, redirects not followed (the page answers 303). */
export async function form(link: string, suffix: string, body: string) {
  const res = await fetch(`${link}${suffix}`, {
    method: 'POST',
    body,
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' },
  });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}
