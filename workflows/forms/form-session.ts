import { condition, continueAsNew, defineQuery, defineSignal, proxyActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { FormSessionActivities } from '../../activities/forms/form-session.js';

// One recipient's form session (docs/forms.md): ask (the native chat form, or the first question),
// then wait for each reply on a durable timer. A reply is read by an activity (validated, stored
// when it fits, re-asked when it does not); the first quiet period sends the one reminder; the next
// expires the session (form.expired). Every answer in: submitted (form.submitted), thanks sent if
// the form has them. A cancel from the API stops the wait at once. The query `state` shows where it is.

export interface FormSessionInput {
  accountId: number;
  sessionUid: string;
  remindAfterSeconds: number;
  expireAfterSeconds: number;
  /** Carried over continue-as-new. */
  opened?: boolean;
  reminded?: boolean;
}

/** A customer's message as the session reads it: the chat text (or the picked option's id), or the native form's fields. */
export interface FormReply {
  uid: string;
  text: string;
  fields: Record<string, unknown> | null;
}

export type FormPrompt =
  { kind: 'open' } | { kind: 'question'; key: string; problem: string | null; attempt: number } | { kind: 'remind' } | { kind: 'thanks' };

export type ReplyOutcome =
  | { outcome: 'ignored' }
  | { outcome: 'ended' }
  | { outcome: 'submitted'; thanks: boolean }
  | { outcome: 'expired' }
  | { outcome: 'ask'; key: string; problem: string | null; attempt: number };

export interface FormSessionState {
  phase: 'opening' | 'waiting' | 'submitted' | 'expired' | 'cancelled' | 'ended';
  reminded: boolean;
  replies: number;
  /** When the current quiet period runs out (the reminder, or the expiry), ISO. */
  quietUntil: string | null;
}

export const replySignal = defineSignal<[FormReply]>('reply');
export const cancelSignal = defineSignal<[]>('cancel');
export const stateQuery = defineQuery<FormSessionState>('state');

const acts = proxyActivities<FormSessionActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '1 minute', backoffCoefficient: 2 },
});

/** Replies read by one run before it hands over to a fresh one (a chatty customer keeps the history short). */
const REPLIES_PER_RUN = 200;

export async function formSessionWorkflow(input: FormSessionInput): Promise<FormSessionState> {
  const queue: FormReply[] = [];
  let cancelled = false;
  const state: FormSessionState = { phase: 'opening', reminded: input.reminded ?? false, replies: 0, quietUntil: null };
  setHandler(replySignal, (r) => void queue.push(r));
  setHandler(cancelSignal, () => void (cancelled = true));
  setHandler(stateQuery, () => state);

  if (!input.opened) await acts.sendFormPrompt({ accountId: input.accountId, sessionUid: input.sessionUid, prompt: { kind: 'open' } });
  state.phase = 'waiting';
  // From the last reply: the reminder after remindAfter, then the expiry at expireAfter.
  let wait = state.reminded ? input.expireAfterSeconds : input.remindAfterSeconds;
  for (;;) {
    state.quietUntil = new Date(Date.now() + wait * 1000).toISOString();
    const got = await condition(() => cancelled || queue.length > 0, wait * 1000);
    if (cancelled) {
      state.phase = 'cancelled';
      return state;
    }
    if (!got) {
      if (!state.reminded) {
        state.reminded = true;
        await acts.sendFormPrompt({ accountId: input.accountId, sessionUid: input.sessionUid, prompt: { kind: 'remind' } });
        wait = input.expireAfterSeconds - input.remindAfterSeconds;
        continue;
      }
      const r = await acts.expireFormSession({ accountId: input.accountId, sessionUid: input.sessionUid, reason: 'no_reply' });
      state.phase = r.expired ? 'expired' : 'ended';
      return state;
    }
    const reply = queue.shift()!;
    state.replies++;
    const r = await acts.takeFormReply({ accountId: input.accountId, sessionUid: input.sessionUid, reply });
    if (r.outcome === 'ended') {
      state.phase = 'ended';
      return state;
    }
    if (r.outcome === 'expired') {
      state.phase = 'expired';
      return state;
    }
    if (r.outcome === 'submitted') {
      state.phase = 'submitted';
      if (r.thanks) await acts.sendFormPrompt({ accountId: input.accountId, sessionUid: input.sessionUid, prompt: { kind: 'thanks' } });
      return state;
    }
    if (r.outcome === 'ask')
      await acts.sendFormPrompt({
        accountId: input.accountId,
        sessionUid: input.sessionUid,
        prompt: { kind: 'question', key: r.key, problem: r.problem, attempt: r.attempt },
      });
    if (r.outcome === 'ignored') {
      // A reply already read or not for this session: the quiet period goes on as it was.
      wait = Math.max(1, Math.ceil((Date.parse(state.quietUntil) - Date.now()) / 1000));
    } else wait = state.reminded ? input.expireAfterSeconds : input.remindAfterSeconds;
    if (queue.length === 0 && (state.replies >= REPLIES_PER_RUN || workflowInfo().continueAsNewSuggested))
      await continueAsNew<typeof formSessionWorkflow>({ ...input, opened: true, reminded: state.reminded });
  }
}
