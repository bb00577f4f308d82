// Orders under load (issue 13, point 8), on a private stack:
//  1. 1,000 concurrent orders of one unit against a product with 100 units: exactly 100 held, 900
//     lines stock_short, 0 oversold; createOrder's throughput beside a bare guarded UPDATE loop
//     (the same 1,000 statements, nothing else) on the same pool in the same run.
//  2. N pending holds (default 10,000) expiring in the same "hour" (a TTL unit of one second:
//     reservation_ttl_hours is seconds here): every one released exactly once by its workflow.
//   npx tsx bench/orders.ts [-- --orders 1000 --units 100 --pool 20 --holds 10000 --ttl 150]
import { Client, Connection } from '@temporalio/client';
import pino from 'pino';
import { benchStack, numberArg, stackCpuSeconds } from './lib.js';
import { openOrm } from '../entities/orm.js';
import { exec, many, one } from '../entities/db.js';
import { createOrder, startOrderHoldAfterCommit, type CreatedOrder } from '../services/orders/index.js';
import { setHoldTtlUnitSeconds } from '../services/orders/ttl.js';

const orders = numberArg('orders', 1000);
const units = numberArg('units', 100);
const poolSize = numberArg('pool', 20);
const holdCount = numberArg('holds', 10_000);
const ttl = numberArg('ttl', 150);

const { stack, dir, accountId } = await benchStack();
const orm = await openOrm(stack.databaseUrl, poolSize);
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });
const taskQueue = stack.env.TEMPORAL_TASK_QUEUE ?? 'svc-main';
const log = pino({ level: 'silent' });
setHoldTtlUnitSeconds(1);
const em = () => orm.em.fork();
const out: Record<string, unknown> = { orders, units, pool: poolSize };

const shop = async (ttlHours: number) =>
  (await one<{ id: number }>(
    em(),
    `insert into catalogues (account_id, name, channels, sku_prefix, stock_policy, reservation_ttl_hours, default_currency, created_at, updated_at)
     values (?, 'Bench', '[]'::jsonb, 'B', 'svc', ?, 'USD', now(), now()) returning id`,
    [accountId, ttlHours],
  ))!.id;
const products = async (catalogueId: number, count: number, inventory: number, prefix: string) =>
  (
    await many<{ id: string }>(
      em(),
      `insert into products (account_id, catalogue_id, sku, name, price, currency, availability, inventory, reserved, created_at, updated_at)
       select ?, ?, ? || g, 'Bench ' || g, 1000, 'USD', 'in stock', ?, 0, now(), now() from generate_series(1, ?) g returning id`,
      [accountId, catalogueId, prefix, inventory, count],
    )
  ).map((r) => Number(r.id));
const order = (catalogueId: number, sku: string) =>
  em().transactional((tx) =>
    createOrder(tx, { accountId, catalogueId, platform: 'storefront', customerHandle: 'bench', lines: [{ retailerId: sku, quantity: 1 }] }),
  );
const secs = (t0: number) => (performance.now() - t0) / 1000;

// ---- 1. contention -----------------------------------------------------------------------------
const hot = await shop(48);
const [hotId] = await products(hot, 1, units, 'HOT-');
let t0 = performance.now();
const results = await Promise.all(Array.from({ length: orders }, () => order(hot, 'HOT-1')));
const orderSeconds = secs(t0);
const figures = (await one<{ inventory: number; reserved: number }>(em(), 'select inventory, reserved from products where id = ?', [
  hotId,
]))!;
const holds = Number(
  (await one<{ n: string }>(em(), "select count(*) as n from stock_holds where product_id = ? and status = 'held'", [hotId]))!.n,
);
const short = Number(
  (await one<{ n: string }>(
    em(),
    `select count(*) as n from orders o, jsonb_array_elements(o.product_items) l where o.catalogue_id = ? and l->>'stock' = 'stock_short'`,
    [hot],
  ))!.n,
);
const bare = await shop(48);
const [bareId] = await products(bare, 1, units, 'BARE-');
t0 = performance.now();
const bareHeld = await Promise.all(
  Array.from({ length: orders }, () =>
    em().transactional((tx) =>
      exec(tx, 'update products set reserved = reserved + ? where id = ? and inventory is not null and inventory - reserved >= ?', [
        1,
        bareId,
        1,
      ]),
    ),
  ),
);
const bareSeconds = secs(t0);
out.contention = {
  held: holds,
  stock_short_lines: short,
  needs_attention_orders: results.filter((r) => r.needsAttention).length,
  oversold: Math.max(0, figures.reserved - figures.inventory),
  product: figures,
  create_order_per_second: Math.round(orders / orderSeconds),
  create_order_seconds: Math.round(orderSeconds * 100) / 100,
  bare_guarded_update_per_second: Math.round(orders / bareSeconds),
  bare_held: bareHeld.reduce((a, b) => a + b, 0),
  ratio: Math.round((orderSeconds / bareSeconds) * 10) / 10,
};
process.stderr.write(`contention: ${JSON.stringify(out.contention)}\n`);

// ---- 2. expiry ---------------------------------------------------------------------------------
if (holdCount > 0) {
  const ttlShop = await shop(ttl);
  const ids = await products(ttlShop, 100, 1_000_000, 'T-');
  t0 = performance.now();
  let next = 0;
  const created: CreatedOrder[] = [];
  await Promise.all(
    Array.from({ length: poolSize }, async () => {
      while (next < holdCount) {
        const i = next++;
        const c = await order(ttlShop, `T-${(i % 100) + 1}`);
        created.push(c);
        await startOrderHoldAfterCommit({ temporal, config: { taskQueue }, orm, log }, c);
      }
    }),
  );
  const createSeconds = secs(t0);
  const lastExpiry = Math.max(...created.map((c) => c.holdExpiresAt!.getTime()));
  const firstExpiry = Math.min(...created.map((c) => c.holdExpiresAt!.getTime()));
  const notStarted = Number(
    (await one<{ n: string }>(em(), 'select count(*) as n from orders where catalogue_id = ? and hold_workflow_started_at is null', [
      ttlShop,
    ]))!.n,
  );
  process.stderr.write(`created ${holdCount} orders and started their workflows in ${createSeconds.toFixed(1)} s; waiting for expiry\n`);
  let remaining = holdCount;
  const deadline = lastExpiry + 15 * 60_000;
  while (Date.now() < deadline) {
    remaining = Number(
      (await one<{ n: string }>(em(), "select count(*) as n from stock_holds where product_id = any(?::bigint[]) and status = 'held'", [
        ids,
      ]))!.n,
    );
    if (remaining === 0) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const doneAt = Date.now();
  const releases = await one<{ n: string; orders: string; most: number }>(
    em(),
    `select count(*) as n, count(distinct (cause->>'order_id')) as orders, max(c) as most from (
       select cause, count(*) over (partition by cause->>'order_id') as c from stock_movements
        where product_id = any(?::bigint[]) and kind = 'release' and cause->>'kind' = 'ttl') m`,
    [ids],
  );
  const reserved = Number(
    (await one<{ n: string }>(em(), 'select sum(reserved) as n from products where id = any(?::bigint[])', [ids]))!.n,
  );
  out.expiry = {
    holds: holdCount,
    ttl_seconds: ttl,
    create_and_start_seconds: Math.round(createSeconds * 10) / 10,
    expiry_window_seconds: Math.round((lastExpiry - firstExpiry) / 100) / 10,
    starts_left_to_reconciler: notStarted,
    still_held: remaining,
    released: Number(releases!.n),
    released_orders: Number(releases!.orders),
    most_releases_of_one_order: releases!.most,
    reserved_after: reserved,
    last_release_after_last_expiry_seconds: Math.round((doneAt - lastExpiry) / 100) / 10,
  };
}
out.cpu_seconds = stackCpuSeconds(stack, dir);
await connection.close();
await orm.close();
await stack.stop();
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
