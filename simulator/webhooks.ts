// Posts webhooks to our service the way providers do: one logical webhook, retried with backoff
// while the receiver is down or answers non-2xx, every attempt recorded for /_sim/callbacks.
import type { SignedRequest } from './signing.js';
import type { CallbackRecord, SimState } from './state.js';

export interface WebhookSpec {
  provider: CallbackRecord['provider'];
  kind: CallbackRecord['kind'];
  messageId: string | null;
  url: string;
  request: SignedRequest;
}

/** Resolves once the webhook was accepted or the retries ran out (or the simulator was reset). */
export async function deliver(state: SimState, spec: WebhookSpec, signal: AbortSignal = state.life.signal): Promise<CallbackRecord> {
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
  const base = Math.max(state.config.receiptDelayMs, 20);

  for (let attempt = 0; attempt <= state.options.callbackRetries; attempt++) {
    if (attempt > 0 && !(await state.life.sleep(base * 2 ** (attempt - 1), signal))) break;
    if (signal.aborted) break;
    const at = new Date().toISOString();
    try {
      const res = await fetch(spec.url, {
        method: 'POST',
        headers: spec.request.headers,
        body: spec.request.rawBody,
        signal: AbortSignal.any([signal, AbortSignal.timeout(state.options.callbackTimeoutMs)]),
      });
      // Drain the body so keep-alive sockets are released; its content is not needed.
      await res.arrayBuffer();
      record.attempts.push({ at, statusCode: res.status, error: null });
      record.statusCode = res.status;
      if (res.ok) {
        record.delivered = true;
        break;
      }
    } catch (err) {
      if (signal.aborted) break;
      const e = err as Error & { cause?: { code?: string } };
      record.attempts.push({ at, statusCode: null, error: e.cause?.code ?? e.message });
      record.statusCode = null;
    }
    state.log.warn(
      { url: spec.url, kind: spec.kind, attempt: attempt + 1, statusCode: record.statusCode },
      'webhook not accepted by receiver',
    );
  }
  state.log.debug({ url: spec.url, kind: spec.kind, delivered: record.delivered }, 'webhook finished');
  return record;
}
