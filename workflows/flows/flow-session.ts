import {
  CancellationScope,
  ParentClosePolicy,
  ChildWorkflowCancellationType,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  executeChild,
  isCancellation,
  proxyActivities,
  setHandler,
  uuid4,
} from '@temporalio/workflow';
import {
  FLOW_LIMITS,
  nextState,
  renderText,
  splitEvent,
  type EndReason,
  type FlowContext,
  type FlowDefinition,
  type FlowState,
  type SplitCase,
} from '../../domain/flows/index.js';
import type { FlowActivities, OpenResult } from '../../activities/flows/flow-session.js';

// One customer's session of a flow (docs/flows.md): the session's row is written first (the
// `opened` update answers the API with it, or with the customer's live session that refuses it),
// then the published revision pinned at the start is walked state by state: messages and templates
// go out through messaging, a wait for a reply is a durable timer raced against the `reply` signal
// (the chat ingress's reply hook sends it), a split reads the last reply, a lead stage is set
// through leads, a named operation runs as the automations family's operation-run child workflow,
// and a handover gives the chat to a person. Each state is recorded as a step. The `end` update
// (the business ending it) cancels whatever the walk is doing, a pending wait included, at once.

export interface FlowSessionInput {
  accountId: number;
  sessionUid: string;
  flowId: number;
  revision: number;
  /** E.164 with '+'. */
  customer: string;
  /** The published revision's definition, pinned for the whole session. */
  definition: FlowDefinition;
  /** The start's parameters: `{{flow.data.*}}` in bodies. */
  parameters: Record<string, unknown>;
  /** The business number the session writes from (absent: the account's first). */
  senderId?: string | null;
}

/** A customer's message, as the reply hook signals it. */
export interface FlowReply {
  messageUid: string;
  body: string;
}

export interface FlowSessionState {
  session_uid: string;
  flow_id: number;
  revision: number;
  /** opening: the row is being written; refused: the customer had a live session; active; ended. */
  status: 'opening' | 'refused' | 'active' | 'ended';
  current_state: string;
  /** While a wait for a reply is pending: when it times out (ISO 8601). */
  waiting_until: string | null;
  steps: number;
  end_reason: EndReason | null;
  error: string | null;
}

export const replySignal = defineSignal<[FlowReply]>('reply');
export const flowSessionQuery = defineQuery<FlowSessionState>('state');
/** Answers once the session's row is written (ok) or refused (the customer's live session). */
export const openedUpdate = defineUpdate<OpenResult, []>('opened');
/** Ends the session now (ended by the business); answers once its end is written. */
export const endUpdate = defineUpdate<FlowSessionState, []>('end');

const act = proxyActivities<FlowActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** What a step's outcome was: the event it leaves by and what it did. */
interface Outcome {
  event: string | null;
  detail: Record<string, unknown>;
  /** A state that ends the session whatever follows (handover, end). */
  ends?: EndReason;
}

export async function flowSessionWorkflow(input: FlowSessionInput): Promise<FlowSessionState> {
  const { accountId, sessionUid, customer, definition } = input;
  const st: FlowSessionState = {
    session_uid: sessionUid,
    flow_id: input.flowId,
    revision: input.revision,
    status: 'opening',
    current_state: definition.initial_state,
    waiting_until: null,
    steps: 0,
    end_reason: null,
    error: null,
  };
  const inbox: FlowReply[] = [];
  const walk = new CancellationScope();
  let opened: OpenResult | null = null;
  let endAsked = false;

  setHandler(flowSessionQuery, () => st);
  setHandler(replySignal, (r) => {
    inbox.push(r);
  });
  setHandler(openedUpdate, async () => {
    await condition(() => opened !== null);
    return opened!;
  });
  setHandler(endUpdate, async () => {
    // Asked while the row is being written too: the walk is then cancelled before its first step.
    if ((st.status === 'active' || st.status === 'opening') && !endAsked) {
      endAsked = true;
      walk.cancel();
    }
    await condition(() => st.status === 'ended' || st.status === 'refused');
    return st;
  });

  opened = await act.openFlowSession({
    accountId,
    sessionUid,
    flowId: input.flowId,
    revision: input.revision,
    customer,
    parameters: input.parameters,
    initialState: definition.initial_state,
  });
  if (!opened.ok) {
    st.status = 'refused';
    return st;
  }
  st.status = 'active';

  const states = new Map<string, FlowState>(definition.states.map((s) => [s.name, s]));
  const ctx: FlowContext = { flow: { data: input.parameters }, contact: { phone: customer }, widgets: {} };
  let lastReply = '';
  let reason: EndReason = 'completed';
  let error: string | null = null;

  const send = async (seq: number, p: Record<string, unknown>) => {
    const template = p.template as { name: string; language: string; components?: unknown[] } | undefined;
    return act.sendFlowMessage({
      accountId,
      sessionUid,
      seq,
      customer,
      senderId: input.senderId ?? null,
      body: typeof p.body === 'string' ? renderText(p.body, ctx) : null,
      template: template ?? null,
    });
  };

  const step = async (s: FlowState, seq: number): Promise<Outcome> => {
    const p = s.properties;
    switch (s.type) {
      case 'send_message': {
        const r = await send(seq, p);
        return { event: r.ok ? 'sent' : 'failed', detail: r };
      }
      case 'wait_for_reply': {
        // Replies that came before this state's question answer earlier states, not this one.
        inbox.length = 0;
        let detail: Record<string, unknown> = {};
        if (p.body !== undefined || p.template !== undefined) {
          const r = await send(seq, p);
          if (!r.ok) return { event: 'failed', detail: r };
          detail = { message_uid: r.message_uid };
        }
        const seconds = typeof p.timeout_seconds === 'number' ? p.timeout_seconds : FLOW_LIMITS.defaultTimeoutSeconds;
        st.waiting_until = new Date(Date.now() + seconds * 1000).toISOString();
        try {
          const got = await condition(() => inbox.length > 0, seconds * 1000);
          if (!got) return { event: 'timeout', detail: { ...detail, timeout_seconds: seconds } };
        } finally {
          st.waiting_until = null;
        }
        const reply = inbox.shift()!;
        lastReply = reply.body;
        ctx.widgets[s.name] = { body: reply.body };
        return { event: 'reply', detail: { ...detail, reply: reply.body, reply_message_uid: reply.messageUid } };
      }
      case 'split': {
        const event = splitEvent(p.cases as SplitCase[], lastReply);
        return { event, detail: { input: lastReply } };
      }
      case 'set_lead_stage': {
        const r = await act.setFlowLeadStage({
          accountId,
          sessionUid,
          customer,
          stage: String(p.stage),
          reason: typeof p.reason === 'string' ? renderText(p.reason, ctx) : null,
        });
        return { event: r.ok ? 'done' : 'failed', detail: r };
      }
      case 'run_operation': {
        const runId = uuid4();
        const given = (p.input as Record<string, unknown> | undefined) ?? {};
        const opInput: Record<string, unknown> = JSON.parse(
          JSON.stringify(given, (_k, v: unknown) => (typeof v === 'string' ? renderText(v, ctx) : v)),
        ) as Record<string, unknown>;
        // The automations family's run of a named operation, as a child: its own id, record and
        // search attributes (ResourceType operation_run), left to finish if the session is ended.
        const result = await executeChild<(a: unknown) => Promise<{ runId: string; status: 'succeeded' | 'failed' }>>(
          'operationRunWorkflow',
          {
            workflowId: `operation/${accountId}/${runId}`,
            args: [{ accountId, runId, operationName: String(p.operation), input: { ...opInput }, source: `flow-session:${sessionUid}` }],
            searchAttributes: { AccountId: [String(accountId)], ResourceId: [runId], ResourceType: ['operation_run'] },
            parentClosePolicy: ParentClosePolicy.ABANDON,
            cancellationType: ChildWorkflowCancellationType.ABANDON,
          },
        );
        return { event: result.status, detail: { operation: p.operation, run_id: result.runId, status: result.status } };
      }
      case 'handover':
        return { event: null, detail: { note: typeof p.note === 'string' ? renderText(p.note, ctx) : null }, ends: 'handed_over' };
      case 'end':
        return { event: null, detail: {}, ends: 'completed' };
    }
  };

  try {
    await walk.run(async () => {
      let name = definition.initial_state;
      for (let seq = 0; ; seq++) {
        if (seq >= FLOW_LIMITS.steps) {
          reason = 'failed';
          error = `the session took ${FLOW_LIMITS.steps} steps`;
          return;
        }
        const s = states.get(name)!;
        st.current_state = name;
        const out = await step(s, seq);
        const next = out.ends || out.event === null ? null : nextState(s, out.event);
        await act.recordFlowStep({
          accountId,
          sessionUid,
          seq,
          state: name,
          type: s.type,
          event: out.event,
          next,
          detail: out.detail,
        });
        st.steps = seq + 1;
        if (out.ends) {
          reason = out.ends;
          return;
        }
        if (next === null) {
          // Nowhere to go: a timeout or a failure nobody planned for ends the session that way.
          reason = out.event === 'timeout' ? 'timed_out' : out.event === 'failed' ? 'failed' : 'completed';
          if (reason === 'failed') error = typeof out.detail.error === 'string' ? out.detail.error : `${s.type} ${name} failed`;
          return;
        }
        name = next;
      }
    });
  } catch (err) {
    if (endAsked || isCancellation(err)) reason = 'ended';
    else {
      reason = 'failed';
      error = err instanceof Error ? (err.cause instanceof Error ? err.cause.message : err.message) : String(err);
    }
  }
  if (endAsked) reason = 'ended';
  await CancellationScope.nonCancellable(() => act.closeFlowSession({ accountId, sessionUid, reason, error, state: st.current_state }));
  st.status = 'ended';
  st.end_reason = reason;
  st.error = error;
  return st;
}
