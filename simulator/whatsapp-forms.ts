// WhatsApp users answering forms (notes §2.4–2.6): a user completing a native form (WhatsApp Flows:
// an `interactive.nfm_reply` whose response_json is a JSON *string* echoing our flow_token, with
// context.id the flow message's wamid), and a deterministic "customers answer" policy a benchmark or
// a test sets once: every flow message the simulator accepts is completed with the policy's answers,
// every question (a text or list message) is answered with the policy's replies in turn, each after
// delay_ms, by the recipient, through the same signed webhook as any inbound message.
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { readJson } from './body.js';
import { isObj } from './graph-errors.js';
import type { SimState, WaRecord } from './state.js';
import { unixSeconds, wamid } from './util.js';
import { deliverInbound } from './whatsapp-inbound.js';

export interface AnswerPolicy {
  /** The native form's fields by key (values as WhatsApp sends them: strings, or what the test wants to try). */
  native: Record<string, unknown> | null;
  /** Replies to questions asked in the chat, in turn per customer (the n-th question gets replies[n % length]). */
  replies: string[];
  delayMs: number;
  /** Only recipients whose digits start with this answer (others stay silent). */
  prefix: string;
  /** Customers who never answer (digits), for expiry tests. */
  silent: Set<string>;
}

const policies = new WeakMap<SimState, AnswerPolicy>();
const asked = new WeakMap<SimState, Map<string, number>>();
const stats = new WeakMap<SimState, { native: number; replies: number; failed: number }>();

const statsOf = (state: SimState) => {
  let s = stats.get(state);
  if (!s) stats.set(state, (s = { native: 0, replies: 0, failed: 0 }));
  return s;
};

/** The flow_token and Flow of a flow message the simulator accepted; null for any other message. */
function flowOf(record: WaRecord): { token: string } | null {
  const i = record.payload.interactive;
  if (!isObj(i) || i.type !== 'flow' || !isObj(i.action) || !isObj(i.action.parameters)) return null;
  const token = i.action.parameters.flow_token;
  return typeof token === 'string' ? { token } : null;
}

/** The inbound nfm_reply that completes a flow message with `answers`. */
function nfmReply(record: WaRecord, token: string, answers: Record<string, unknown>): Record<string, unknown> {
  return {
    context: { from: record.phoneNumberId, id: record.id },
    from: record.waId,
    id: wamid(record.waId),
    timestamp: unixSeconds(),
    type: 'interactive',
    interactive: {
      type: 'nfm_reply',
      nfm_reply: { name: 'flow', body: 'Sent', response_json: JSON.stringify({ flow_token: token, ...answers }) },
    },
  };
}

const textReply = (record: WaRecord, body: string) => ({
  context: { from: record.phoneNumberId, id: record.id },
  from: record.waId,
  id: wamid(record.waId),
  timestamp: unixSeconds(),
  type: 'text',
  text: { body },
});

/** Called for every message the simulator accepts: the policy's customer answers it, later. */
export function answerAsCustomer(state: SimState, record: WaRecord): void {
  const policy = policies.get(state);
  if (!policy || record.errors || !record.waId.startsWith(policy.prefix) || policy.silent.has(record.waId)) return;
  const flow = flowOf(record);
  let message: Record<string, unknown> | null = null;
  if (flow && policy.native) message = nfmReply(record, flow.token, policy.native);
  else if (!flow && policy.replies.length && (record.type === 'text' || record.type === 'interactive')) {
    const seen = asked.get(state) ?? new Map<string, number>();
    asked.set(state, seen);
    const n = seen.get(record.waId) ?? 0;
    seen.set(record.waId, n + 1);
    message = textReply(record, policy.replies[n % policy.replies.length]);
  }
  if (!message) return;
  const m = message;
  const s = statsOf(state);
  setTimeout(() => {
    deliverInbound(state, { waId: record.waId, phoneNumberId: record.phoneNumberId }, m).then(
      (r) => void (r.delivered ? (flow ? s.native++ : s.replies++) : s.failed++),
      () => void s.failed++,
    );
  }, policy.delayMs).unref();
}

function badRequest(ctx: Context, error: string): void {
  ctx.status = 400;
  ctx.body = { error };
}

export function registerFormsSim(router: Router, state: SimState): void {
  /**
   * A user completes a flow message: {wamid} (the message as sent) or {flow_token}, and `answers`
   * (the fields of the form); `response_json` as a raw string instead sends exactly that (a malformed
   * answer). Delivered as Meta's signed webhook.
   */
  router.post('/whatsapp/flows/complete', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) return badRequest(ctx, 'body must be a JSON object');
    const record =
      typeof input.wamid === 'string'
        ? state.wa.byId.get(input.wamid)
        : typeof input.flow_token === 'string'
          ? state.wa.messages.find((m) => flowOf(m)?.token === input.flow_token)
          : undefined;
    const flow = record && flowOf(record);
    if (!record || !flow) return badRequest(ctx, 'no flow message with that wamid or flow_token was sent');
    if (input.answers !== undefined && !isObj(input.answers)) return badRequest(ctx, 'answers must be an object');
    const message = nfmReply(record, flow.token, isObj(input.answers) ? input.answers : {});
    if (typeof input.response_json === 'string')
      (message.interactive as { nfm_reply: Record<string, unknown> }).nfm_reply.response_json = input.response_json;
    ctx.body = await deliverInbound(state, { waId: record.waId, phoneNumberId: record.phoneNumberId }, message);
  });

  /** {native?, replies?, delay_ms?, prefix?, silent?}: how simulated customers answer from now on. */
  router.put('/whatsapp/customers/policy', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) return badRequest(ctx, 'body must be a JSON object');
    if (input.native !== undefined && input.native !== null && !isObj(input.native))
      return badRequest(ctx, 'native must be an object of answers or null');
    if (input.replies !== undefined && (!Array.isArray(input.replies) || input.replies.some((r) => typeof r !== 'string')))
      return badRequest(ctx, 'replies must be an array of strings');
    const delay = input.delay_ms ?? 0;
    if (typeof delay !== 'number' || delay < 0 || delay > 600_000) return badRequest(ctx, 'delay_ms must be 0–600000');
    const silent = Array.isArray(input.silent) ? input.silent.map((x) => String(x).replace(/\D/g, '')) : [];
    policies.set(state, {
      native: isObj(input.native) ? input.native : null,
      replies: (input.replies as string[] | undefined) ?? [],
      delayMs: delay,
      prefix: typeof input.prefix === 'string' ? input.prefix.replace(/\D/g, '') : '',
      silent: new Set(silent),
    });
    asked.set(state, new Map());
    stats.set(state, { native: 0, replies: 0, failed: 0 });
    ctx.body = { policy: 'set' };
  });

  router.get('/whatsapp/customers/policy', (ctx) => {
    const p = policies.get(state);
    ctx.body = { policy: p ? { ...p, silent: [...p.silent] } : null, answered: statsOf(state) };
  });

  router.delete('/whatsapp/customers/policy', (ctx) => {
    policies.delete(state);
    ctx.body = { policy: null, answered: statsOf(state) };
  });
}
