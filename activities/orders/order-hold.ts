import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { expireOrderHolds, type ExpiredHolds } from '../../services/orders/holds.js';

export type { ExpiredHolds };

export interface OrderHoldDeps {
  orm: MikroORM;
  log: Logger;
}

export function createOrderHoldActivities(deps: OrderHoldDeps) {
  return {
    /** Releases the order's holds still held, as TTL expiry; a repeat (retry, late timer) releases nothing. */
    async expireOrderHolds(input: { accountId: number; orderId: number }): Promise<ExpiredHolds> {
      const out = await expireOrderHolds(deps.orm.em.fork(), input.accountId, input.orderId);
      if (out.holds) deps.log.info({ ...input, ...out }, 'order holds expired');
      return out;
    },
  };
}

export type OrderHoldActivities = ReturnType<typeof createOrderHoldActivities>;
