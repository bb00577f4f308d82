import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createProviderRegistry } from './providers/index.js';
import { createMessageActivities } from './messaging/messages.js';
import { createDispatchActivities } from './messaging/dispatch.js';
import { createWebhookActivities } from './webhooks/webhook-delivery.js';
import { createOperationActivities } from './automations/operation-run.js';
import { createContactActivities } from './contacts/contact-import.js';
import { createCampaignActivities } from './campaigns/campaign.js';
import { mapDomainErrors } from './failures.js';

export interface ActivityDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

/** Every activity the worker registers, built once per worker process from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const providers = createProviderRegistry(deps.config, { timeoutMs: 10_000 });
  const messageDeps = { orm: deps.orm, providers, log: deps.log };
  return mapDomainErrors({
    ...createMessageActivities(messageDeps),
    ...createDispatchActivities({
      ...messageDeps,
      maxPerSecond: { sms: deps.config.smsMaxPerSecond, whatsapp: deps.config.whatsappMaxPerSecond },
    }),
    ...createWebhookActivities({ orm: deps.orm, log: deps.log, destinations: deps.config }),
    ...createOperationActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
    ...createContactActivities({ orm: deps.orm, log: deps.log }),
    ...createCampaignActivities({ orm: deps.orm, log: deps.log, smsSegmentPrice: deps.config.smsSegmentPrice }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
