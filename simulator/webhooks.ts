// Posts webhooks to our service the way providers do: one logical webhook, retried with backoff
// while the receiver is down or answers non-2xx, every attempt recorded for /_sim/callbacks.
//
// Every SMS produces two of these, so they go out through undici's request API on a keep-alive Agent
// rather than global fetch (no WHATWG Request/Response/streams, no AbortSignal per attempt). The
// per-attempt limit is the Agent's connect timeout plus the request's headers/body timeouts. The
// Agent belongs to the lifecycle generation: reset/close destroys it, which fails every attempt in
// flight at once, and the next generation opens a fresh one on first use.
import { Agent } from 'undici';
import type { Generation } from './lifecycle.js';
import type { SignedRequest } from './signing.js';
import type { CallbackRecord, SimState } from './state.js';

export interface WebhookSpec {
  provider: CallbackRecord['provider'];
  kind: CallbackRecord['kind'];
  messageId: string | null;
  url: string;
  request: SignedRequest;
}

const agents = new WeakMap<Generation, Agent>();

function agentFor(state: SimState, gen: Generation): Agent {
  let agent = agents.get(gen);
  if (agent) return agent;
  const ms = state.options.callbackTimeoutMs;
  agent = new Agent({ connect: { timeout: ms }, keepAliveTimeout: 4_000, headersTimeout: ms, bodyTimeout: ms });
  agents.set(gen, agent);
  const created = agent;
  gen.whenEnded(() => void created.destroy().catch(() => {}));
  return agent;
}

// Receipts all go to the same status URL but for the query (which names the message), so the split
// of the part before `?` is kept instead of parsing every URL.
let lastTarget: { base: string; origin: string; path: string } | null = null;

function target(url: string): { origin: string; path: string } {
  const q = url.indexOf('?');
  const base = q < 0 ? url : url.slice(0, q);
  const search = q < 0 ? '' : url.slice(q);
  if (lastTarget?.base !== base) {
    const u = new URL(base);
    lastTarget = { base, origin: u.origin, path: u.pathname };
  }
  return { origin: lastTarget.origin, path: `${lastTarget.path}${search}` };
}

/** Resolves once the webhook was accepted or the retries ran out (or the simulator was reset). */
export async function deliver(state: SimState, spec: WebhookSpec, gen: Generation = state.life.generation): Promise<CallbackRecord> {
  const record: CallbackRecord = {
    seq: state.nextSeq(),
    provider: spec.provider,
    kind: spec.kind,
    messageId: spec.messageId,
    url: spec.url,
    headers: spec.request.headers,
    body: spec.request.body,
    rawBody: spec.request.rawBody,
    attempts: [],
    statusCode: null,
    delivered: false,
  };
  state.callbacks.push(record);
  // Trimmed in steps (a quarter over the limit) so the log is not shifted on every webhook.
  const limit = state.options.callbackLogLimit;
  if (state.callbacks.length > limit + Math.ceil(limit / 4)) state.callbacks.splice(0, state.callbacks.length - limit);
  const base = Math.max(state.config.receiptDelayMs, 20);
  const timeout = state.options.callbackTimeoutMs;

  for (let attempt = 0; attempt <= state.options.callbackRetries; attempt++) {
    if (attempt > 0 && !(await gen.sleep(base * 2 ** (attempt - 1)))) break;
    if (gen.aborted) break;
    const at = new Date().toISOString();
    try {
      const { origin, path } = target(spec.url);
      const res = await agentFor(state, gen).request({
        origin,
        path,
        method: 'POST',
        headers: spec.request.headers,
        body: spec.request.rawBody,
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
      // Drain the body so the keep-alive socket is released; its content is not needed.
      await res.body.dump();
      record.attempts.push({ at, statusCode: res.statusCode, error: null });
      record.statusCode = res.statusCode;
      if (res.statusCode >= 200 && res.statusCode < 300) {
        record.delivered = true;
        break;
      }
    } catch (err) {
      if (gen.aborted) break;
      const e = err as Error & { code?: string; cause?: { code?: string } };
      record.attempts.push({ at, statusCode: null, error: e.code ?? e.cause?.code ?? e.message });
      record.statusCode = null;
    }
    state.log.warn(
      { url: spec.url, kind: spec.kind, attempt: attempt + 1, statusCode: record.statusCode },
      'webhook not accepted by receiver',
    );
  }
  if (state.log.isLevelEnabled('debug'))
    state.log.debug({ url: spec.url, kind: spec.kind, delivered: record.delivered }, 'webhook finished');
  return record;
}
