import { defineQuery, proxyActivities, setHandler } from '@temporalio/workflow';
import type { PlatformPushActivities } from '../../activities/catalogues/platform-push.js';

export interface CatalogueSetupInput {
  accountId: number;
  catalogueId: number;
}

export interface CatalogueSetupState {
  phase: 'creating' | 'created';
  metaCatalogueId: string | null;
}

export const catalogueSetupStateQuery = defineQuery<CatalogueSetupState>('state');

// The API waits about 15 s for this answer; a provider that stays unreachable longer is retried a
// while more (the shop keeps waiting for its catalogue), a refusal ends it at once (ProviderRefused).
const provider = proxyActivities<PlatformPushActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * Creates a shop's catalogue at the chat provider and stores its id in meta_catalogue_id
 * (`catalogue-setup/<account>/<catalogue>`). A refusal fails the workflow with the activity's
 * ProviderRefused failure: the API then answers 502 and removes the shop.
 */
export async function catalogueSetupWorkflow(input: CatalogueSetupInput): Promise<{ metaCatalogueId: string }> {
  const state: CatalogueSetupState = { phase: 'creating', metaCatalogueId: null };
  setHandler(catalogueSetupStateQuery, () => state);
  const { metaCatalogueId } = await provider.createProviderCatalogue(input);
  state.metaCatalogueId = metaCatalogueId;
  state.phase = 'created';
  return { metaCatalogueId };
}
