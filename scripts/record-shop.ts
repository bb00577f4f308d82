// Records the basket timer's histories for the replay test:
//   npx tsx scripts/record-shop.ts
// A stack of its own with a quiet period of 2 s and an expiry of 4 s: a basket sent into a chat and
// left with items (abandoned, then expired), and a basket changed on its page and submitted
// (activity, then the order ends the timer): test/replay/histories/cartAbandonmentWorkflow/<scenario>.json.
// Re-record after a change to workflows/shop/cart-abandonment.ts.
import { cartAbandonmentWorkflowId } from '../workflows/shop/cart-abandonment.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'cartAbandonmentWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

await withRecorder(
  'svc-record-shop',
  { CART_QUIET_SECONDS: '2', CART_EXPIRE_SECONDS: '4' },
  'Shop recorder',
  async ({ stack, client, account, admin, api: apiCall, save: saveHistory }) => {
    const save = (scenario: string, cartId: number) =>
      saveHistory(TYPE, scenario, client.workflow.getHandle(cartAbandonmentWorkflowId(account.id, cartId)));
    await admin('POST', `/accounts/${account.id}/phone-numbers`, {
      number: '+255700100200',
      capabilities: ['whatsapp'],
      provider_phone_number_id: '5550001',
      business_account_id: 'WABA-REC',
    });
    const shop = (await apiCall('POST', '/api/v3/catalogues', { name: 'Recorded café', default_currency: 'USD', channels: [] })).data;
    const tea = (await apiCall('POST', `/api/v3/catalogues/${shop.id}/products`, { sku: 'TEA', name: 'Tea', price: 200 })).data;

    // Sent into a chat (the customer wrote first) with a line, then left: abandoned, then expired.
    await fetch(`${stack.simulatorUrl}/_sim/whatsapp/inbound`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ from: '255711222333', phone_number_id: '5550001', text: 'hi' }),
    });
    await sleep(1000);
    const sent = (await apiCall('POST', '/api/v3/shop-links', { to: '+255711222333', items: [{ sku: 'TEA', quantity: 2 }] })).data;
    if (!sent?.sent) throw new Error(`the link was not sent: ${JSON.stringify(sent)}`);
    await save('abandoned-then-expired', sent.cart.id);

    // Shared, changed on its page (activity), submitted (the order ends the timer).
    const shared = (await apiCall('POST', '/api/v3/shop-links', {})).data;
    const post = (suffix: string, body: string) =>
      fetch(`${shared.link}${suffix}`, {
        method: 'POST',
        body,
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
    await post('/items', `product_id=${tea.id}&quantity=1`);
    await sleep(500);
    await post('/note', 'note=by the window');
    await post('/submit', '');
    await save('activity-then-ordered', shared.cart.id);
  },
);
