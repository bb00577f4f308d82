import type { MikroORM } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import { providerRegistry, type ProviderKey, type ProviderSettings, type WebhookRequest } from '../../providers/index.js';
import { signalWorkflow } from '../../temporal/starters.js';
import { templateReviewStarter, templateReviewWorkflowId } from '../../workflows/templates/template-review.starter.js';
import { applyTemplateStatus } from './status.js';
import { templatesOfProviderId } from './store.js';

// The templates family's door of the provider webhook ingress, subscribed where the API wires it
// (api/http/ingress.ts, InboundWebhookHook), so messaging names nothing of ours. A verified
// `message_template_status_update` is applied to every template it names (its provider id on the
// WABA the notification came for: one per account holding it), in one transaction with
// template.status_changed, and the template's review workflow is signalled so it stops polling.

export interface TemplateWebhookDeps {
  orm: MikroORM;
  temporal: Client;
  config: ProviderSettings;
  log?: Logger;
}

export async function receiveTemplateWebhook(deps: TemplateWebhookDeps, provider: ProviderKey, req: WebhookRequest): Promise<void> {
  const templates = providerRegistry(deps.config).templates();
  if (provider !== templates.key) return;
  for (const e of templates.parseWebhook(req)) {
    const em = deps.orm.em.fork();
    const rows = await templatesOfProviderId(em, e.businessAccountId, e.providerTemplateId);
    if (!rows.length)
      deps.log?.info({ waba: e.businessAccountId, providerTemplateId: e.providerTemplateId }, 'template status for no template of ours');
    for (const r of rows) {
      const applied = await applyTemplateStatus(em, r.account_id, r.id, { providerStatus: e.event, reason: e.reason }, 'webhook');
      if (!applied) continue;
      try {
        await signalWorkflow(deps.temporal, templateReviewStarter, templateReviewWorkflowId(r.account_id, r.id), 'templateStatus', {
          status: applied.row.status,
        });
      } catch (err) {
        // No review running (it ended, or the template came by sync): the status is stored, which is all that matters.
        if (!(err instanceof WorkflowNotFoundError)) deps.log?.warn({ err, template: r.id }, 'template review not signalled');
      }
    }
  }
}
