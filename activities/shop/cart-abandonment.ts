import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import { judgeQuietCart } from '../../services/shop/index.js';

// The basket timer's one activity: judge a basket whose quiet or expiry period ran out.

export interface CartTimerDeps {
  orm: MikroORM;
  log: Logger;
  publicBaseUrl: string;
}

export function createCartTimerActivities(deps: CartTimerDeps) {
  return {
    async judgeQuietCart(input: {
      accountId: number;
      cartId: number;
      phase: 'quiet' | 'expiry';
      quietSeconds: number;
      expireSeconds: number;
    }) {
      return judgeQuietCart(deps.orm.em.fork(), deps.publicBaseUrl, input);
    },
  };
}

export type CartTimerActivities = ReturnType<typeof createCartTimerActivities>;
