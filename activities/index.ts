import type { MikroORM } from '@mikro-orm/postgresql';
import { providerTaskQueue, type Config } from '../config.js';
import type { Logger } from '../logger.js';
import { createChatModel, createProviderRegistry, type ChatModel } from '../providers/index.js';
import { createAgentRunActivities } from './agents/agent-run.js';
import { createMessageActivities } from './messaging/messages.js';
import { createDispatchActivities, providerBudgetBucket, providerBudgets } from './messaging/dispatch.js';
import { createWebhookActivities } from './webhooks/webhook-delivery.js';
import { createWebhookDispatchActivities } from './webhooks/webhook-dispatch.js';
import { createOperationActivities } from './automations/operation-run.js';
import { subscriptionDeliveries } from '../services/automations/index.js';
import { createContactActivities } from './contacts/contact-import.js';
import { createCampaignActivities } from './campaigns/campaign.js';
import { createPlatformPushActivities } from './catalogues/platform-push.js';
import { createCatalogueSyncActivities } from './catalogues/catalogue-sync.js';
import { createFeedActivities } from './catalogues/feed-pull.js';
import { createCatalogueDriftActivities } from './catalogues/catalogue-drift.js';
import { createOrderHoldActivities } from './orders/order-hold.js';
import { createCartTimerActivities } from './shop/cart-abandonment.js';
import { createDataIndexActivities } from './data/indexes.js';
import { createChatGroupActivities } from './groups/chat-group.js';
import { createPaymentActivities } from './payments/payment.js';
import { orderPaid } from '../services/orders/index.js';
import { createRefundActivities } from './payments/refund.js';
import { createReconciliationActivities } from './payments/reconciliation.js';
import { createOccasionActivities } from './occasions/occasion.js';
import { createTemplateActivities } from './templates/template.js';
import { createPostActivities } from './posts/post.js';
import { createFlowActivities } from './flows/flow-session.js';
import { createFormSessionActivities } from './forms/form-session.js';
import { mapDomainErrors } from './failures.js';

export interface ActivityDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

/** Every activity the worker registers, built once per worker process from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const providers = createProviderRegistry(deps.config, { timeoutMs: 10_000 });
  // One budget per channel for the whole deployment, drawn on by both send paths (docs/architecture.md, Several processes).
  const budgets = providerBudgets(deps.orm, deps.log, {
    sms: { bucket: providerBudgetBucket(providerTaskQueue(deps.config, 'sms')), perSecond: deps.config.smsMaxPerSecond },
    whatsapp: { bucket: providerBudgetBucket(providerTaskQueue(deps.config, 'whatsapp')), perSecond: deps.config.whatsappMaxPerSecond },
  });
  let chatModel: ChatModel | undefined;
  const model = () => (chatModel ??= createChatModel(deps.config));
  const messageDeps = { orm: deps.orm, providers, log: deps.log, countProviderCall: (c: 'sms' | 'whatsapp') => void budgets.count[c]() };
  return mapDomainErrors({
    ...createMessageActivities(messageDeps),
    ...createDispatchActivities({ ...messageDeps, budgets }),
    // Webhook deliveries also carry automation subscriptions: wired here, so webhooks imports nothing of automations.
    ...createWebhookActivities({ orm: deps.orm, log: deps.log, destinations: deps.config, subscriptions: subscriptionDeliveries }),
    ...createWebhookDispatchActivities({ orm: deps.orm, log: deps.log, destinations: deps.config, subscriptions: subscriptionDeliveries }),
    ...createOperationActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
    ...createContactActivities({ orm: deps.orm, log: deps.log }),
    ...createCampaignActivities({ orm: deps.orm, log: deps.log, smsSegmentPrice: deps.config.smsSegmentPrice }),
    ...createPlatformPushActivities({ orm: deps.orm, catalogue: () => providers.catalogue(), log: deps.log }),
    ...createCatalogueSyncActivities({ orm: deps.orm, log: deps.log }),
    ...createFeedActivities({ orm: deps.orm, log: deps.log, config: deps.config }),
    ...createCatalogueDriftActivities({ orm: deps.orm, catalogue: () => providers.catalogue(), log: deps.log }),
    ...createCartTimerActivities({ orm: deps.orm, log: deps.log, publicBaseUrl: deps.config.publicBaseUrl }),
    ...createOrderHoldActivities({ orm: deps.orm, log: deps.log }),
    ...createDataIndexActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
    ...createChatGroupActivities({ orm: deps.orm, config: deps.config, log: deps.log, groups: () => providers.chatGroups() }),
    // A paid payment tells its subject's family: wired here, so payments imports nothing of orders.
    ...createPaymentActivities({
      orm: deps.orm,
      log: deps.log,
      payments: (stored) => providers.payments(stored),
      paidSubjects: { order: orderPaid },
    }),
    ...createRefundActivities({ orm: deps.orm, log: deps.log, payments: (stored) => providers.payments(stored) }),
    ...createReconciliationActivities({ orm: deps.orm, log: deps.log, payments: (stored) => providers.payments(stored) }),
    ...createOccasionActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
    ...createTemplateActivities({ orm: deps.orm, log: deps.log, templates: () => providers.templates() }),
    ...createPostActivities({ orm: deps.orm, log: deps.log, social: () => providers.social() }),
    ...createFlowActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
    ...createAgentRunActivities({ orm: deps.orm, log: deps.log, model, prices: deps.config }),
    ...createFormSessionActivities({ orm: deps.orm, config: deps.config, log: deps.log }),
  });
}

export type Activities = ReturnType<typeof createActivities>;
