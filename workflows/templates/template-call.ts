import { proxyActivities } from '@temporalio/workflow';
import type { TemplateActivities, TemplateCall, TemplateCallOutcome } from '../../activities/templates/template.js';

/**
 * One call of the provider's template management that an API request waits for
 * (`template-call/<account>/<request>`): refresh a template's status, sync a WABA's approved
 * templates, delete a template. One activity that calls the provider and applies its answer, so an
 * answer that comes after the request stopped waiting still lands; outages are retried by its
 * policy, a refusal fails the workflow with a ProviderRefused failure.
 */
const provider = proxyActivities<TemplateActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 6 },
});

export interface TemplateCallInput {
  accountId: number;
  call: TemplateCall;
}

export async function templateCallWorkflow(input: TemplateCallInput): Promise<TemplateCallOutcome> {
  return provider.templateCall({ accountId: input.accountId, call: input.call });
}
