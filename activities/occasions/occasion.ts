import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../../services/platform/context.js';
import { accountForContext } from '../../services/account/index.js';
import { runScheduledOccasion, type OccasionRunResult } from '../../services/occasions/index.js';

export interface OccasionActivityDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

export type OccasionRunOutcome = OccasionRunResult;

export function createOccasionActivities(deps: OccasionActivityDeps) {
  return {
    /**
     * The day's greeting of one occasion (services/occasions runScheduledOccasion), as the system.
     * Idempotent: a retry, or a second run of the day, finds the day's campaign by its business key.
     */
    async runOccasion(input: { accountId: number; key: string; at: string }): Promise<OccasionRunOutcome> {
      const em = deps.orm.em.fork();
      const account = await accountForContext(em, input.accountId);
      if (!account) return { status: 'skipped', at: input.at, day: null, reason: 'account_gone' };
      const at = new Date(input.at);
      if (Number.isNaN(at.getTime())) throw ApplicationFailure.nonRetryable(`not a time: ${input.at}`, 'OccasionInvalid');
      const rc: RequestContext = { account, actor: { kind: 'system', process: `occasion:${input.key}` }, em, log: deps.log };
      const out = await runScheduledOccasion(rc, { temporal: Context.current().client, config: deps.config }, input.key, at);
      deps.log.info({ accountId: input.accountId, key: input.key, ...out }, 'occasion run');
      return out;
    },
  };
}

export type OccasionActivities = ReturnType<typeof createOccasionActivities>;
