// Records the order-hold workflow's histories for the replay test:
//   npx tsx scripts/record-orders.ts
// A stack of its own; orders created through services/orders createOrder (as the chat and shop
// doors do) with a TTL unit of one second, then left to expire, confirmed through the API, or sent
// back to pending first: test/replay/histories/orderHoldWorkflow/<scenario>.json. Re-record after
// a change to workflows/orders/order-hold.ts.
import pino from 'pino';
import { openOrm } from '../entities/orm.js';
import { one } from '../entities/db.js';
import { loadConfig } from '../config.js';
import { createOrder, startOrderHoldAfterCommit } from '../services/orders/index.js';
import { setHoldTtlUnitSeconds } from '../services/orders/ttl.js';
import { orderHoldWorkflowId } from '../workflows/orders/order-hold.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'orderHoldWorkflow';
setHoldTtlUnitSeconds(1);

await withRecorder('svc-record-orders', {}, 'Orders recorder', async ({ stack, client, account, api: apiCall, save }) => {
  const orm = await openOrm(stack.databaseUrl, 2);
  const keep = (scenario: string, orderId: number) =>
    save(TYPE, scenario, client.workflow.getHandle(orderHoldWorkflowId(account.id, orderId)));
  try {
    const shop = (
      await apiCall('POST', '/api/v3/catalogues', {
        name: 'Recorded orders',
        default_currency: 'USD',
        channels: [],
        stock_policy: 'svc',
        reservation_ttl_hours: 3,
      })
    ).data;
    await apiCall('POST', `/api/v3/catalogues/${shop.id}/products`, { sku: 'MUG-1', name: 'Blue mug', price: 1250, inventory: 50 });
    const em = () => orm.em.fork();
    const log = pino({ level: 'silent' });

    const order = async () => {
      const created = await em().transactional((tx) =>
        createOrder(tx, {
          accountId: account.id,
          catalogueId: shop.id,
          platform: 'manual',
          customerHandle: '+15550100',
          lines: [{ retailerId: 'MUG-1', quantity: 2 }],
        }),
      );
      if (!created.holdExpiresAt) throw new Error('the order held nothing');
      await startOrderHoldAfterCommit({ temporal: client, config: { taskQueue: loadConfig().taskQueue }, orm, log }, created);
      return created.orderId;
    };
    // Unanswered: the timer fires and the guarded expiry releases the hold.
    await keep('expired', await order());
    // Confirmed through the API before the TTL: the status change signals the workflow, which ends.
    const confirmed = await order();
    await apiCall('PUT', `/api/v3/catalogues/orders/${confirmed}/status`, { status: 'confirmed' });
    await keep('moved-on', confirmed);
    // Back to pending first (a signal that is not moving on), then unanswered: the timer still fires.
    const back = await order();
    await client.workflow.getHandle(orderHoldWorkflowId(account.id, back)).signal('orderMovedOn', { status: 'pending' });
    await keep('pending-then-expired', back);
    const left = await one<{ n: string }>(em(), "select count(*) as n from stock_holds where status = 'held'");
    if (Number(left!.n) !== 0) throw new Error(`${left!.n} holds still held`);
  } finally {
    await orm.close();
  }
});
