import { condition, defineQuery, defineSignal, defineUpdate, proxyActivities, setHandler } from '@temporalio/workflow';
import { isInReview, type TemplateStatus } from '../../domain/templates/index.js';
import type { TemplateActivities } from '../../activities/templates/template.js';

// One template's review (docs/templates.md): submit it to the provider (the API call that created it
// waits for that answer through the `submission` update), then follow the review until a final
// status. The provider's status-update webhook is applied by the ingress and signalled here; when no
// webhook comes, the status is polled on a backoff (first after TEMPLATE_REVIEW_POLL_SECONDS,
// doubling to TEMPLATE_REVIEW_POLL_MAX_SECONDS), and the review is left after
// TEMPLATE_REVIEW_MAX_HOURS (the template stays pending; a webhook or a refresh still moves it).

export interface TemplateReviewInput {
  accountId: number;
  templateId: string;
  pollFirstSeconds: number;
  pollMaxSeconds: number;
  maxReviewSeconds: number;
}

/** The ingress applied a status-update webhook to the template: its status now. */
export interface TemplateStatusSignal {
  status: TemplateStatus;
}

export interface TemplateReviewState {
  templateId: string;
  /** submitting: the provider has not answered the submission; reviewing; then reviewed, refused (nothing kept), gone (deleted meanwhile) or gave_up (the bound). */
  phase: 'submitting' | 'reviewing' | 'reviewed' | 'refused' | 'gone' | 'gave_up';
  status: TemplateStatus | null;
  providerTemplateId: string | null;
  /** The provider's refusal of the submission (its code and words). */
  refusal: { code: string; message: string } | null;
  polls: number;
  signals: number;
}

export const templateStatusSignal = defineSignal<[TemplateStatusSignal]>('templateStatus');
export const templateReviewQuery = defineQuery<TemplateReviewState>('state');
/** Answers once the provider answered the submission, or after `waitMs`, whichever comes first. */
export const submissionUpdate = defineUpdate<TemplateReviewState, [number]>('submission');

// The submission and the status reads: outages retried a while, a refusal comes back as a value.
const provider = proxyActivities<TemplateActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

export async function templateReviewWorkflow(input: TemplateReviewInput): Promise<TemplateReviewState> {
  const { accountId, templateId } = input;
  const state: TemplateReviewState = {
    templateId,
    phase: 'submitting',
    status: 'submitting',
    providerTemplateId: null,
    refusal: null,
    polls: 0,
    signals: 0,
  };
  const inbox: TemplateStatus[] = [];
  setHandler(templateReviewQuery, () => state);
  setHandler(templateStatusSignal, (s) => {
    inbox.push(s.status);
  });
  setHandler(submissionUpdate, async (waitMs) => {
    if (waitMs > 0) await condition(() => state.phase !== 'submitting', waitMs);
    return state;
  });

  let submitted: Awaited<ReturnType<TemplateActivities['submitTemplate']>>;
  try {
    submitted = await provider.submitTemplate({ accountId, templateId });
  } catch (err) {
    // Retries ran out on an unreachable provider: the template is withdrawn, as a refusal would be.
    const message = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    submitted = await provider.withdrawTemplate({ accountId, templateId, code: 'unavailable', message });
  }
  if (submitted.kind === 'refused') {
    state.phase = 'refused';
    state.status = null;
    state.refusal = { code: submitted.code, message: submitted.message };
    return state;
  }
  if (submitted.kind === 'gone') {
    state.phase = 'gone';
    state.status = null;
    return state;
  }
  state.providerTemplateId = submitted.providerTemplateId;
  state.status = submitted.status;
  state.phase = 'reviewing';

  const until = Date.now() + input.maxReviewSeconds * 1000;
  let every = input.pollFirstSeconds * 1000;
  while (state.status !== null && isInReview(state.status)) {
    const left = until - Date.now();
    if (left <= 0) {
      state.phase = 'gave_up';
      return state;
    }
    if (await condition(() => inbox.length > 0, Math.min(every, left))) {
      state.signals++;
      state.status = inbox.shift()!;
      continue;
    }
    if (Date.now() >= until) continue;
    state.polls++;
    every = Math.min(input.pollMaxSeconds * 1000, every * 2);
    const checked = await provider.checkTemplateStatus({ accountId, templateId });
    if (checked.status === 'gone') {
      state.phase = 'gone';
      state.status = null;
      return state;
    }
    state.status = checked.status;
  }
  state.phase = 'reviewed';
  return state;
}
