// WhatsApp Cloud API send endpoint. Order of checks follows Meta: auth, then request validity, then
// throttles; delivery problems (24 h window, non-WhatsApp numbers) only surface later as webhooks.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { BodyError, readJson } from './body.js';
import { graphEnvelope, graphHttpStatus, isObj } from './graph-errors.js';
import type { SimState, WaRecord } from './state.js';
import { headersOfInterest, isUndeliverable, wamid } from './util.js';
import { validateMessage } from './whatsapp-validate.js';
import { startWaTimeline, statusError } from './whatsapp-webhooks.js';
import { managedTemplate } from './whatsapp-templates.js';
import { answerAsCustomer } from './whatsapp-forms.js';

export const WINDOW_MS = 24 * 3600 * 1000;

export function windowKey(phoneNumberId: string, waId: string): string {
  return `${phoneNumberId}:${waId}`;
}

export function whatsappRouter(state: SimState): Router {
  // Any Graph version is accepted so the adapter's configured version can move without breaking tests.
  const r = new Router({ prefix: '/whatsapp/:version' });

  r.post('/:phoneNumberId/messages', async (ctx) => {
    const phoneNumberId = ctx.params.phoneNumberId ?? '';
    const to = (v: unknown): string | null => (isObj(v) && typeof v.to === 'string' ? v.to : null);
    const reject = (code: number, details: string, fault: SimFault = null, recipient: string | null = null, status?: number): void => {
      graphError(ctx, code, details, status);
      state.rejections.push({
        seq: state.nextSeq(),
        provider: 'whatsapp',
        at: new Date().toISOString(),
        to: recipient,
        httpStatus: ctx.status,
        code,
        message: details,
        fault,
      });
    };

    if (ctx.get('authorization') !== `Bearer ${state.options.waAccessToken}`) return reject(190, 'Invalid OAuth access token');
    if (!/^v\d+\.\d+$/.test(ctx.params.version ?? '') || !/^\d+$/.test(phoneNumberId)) {
      return reject(
        100,
        `Unsupported post request. Object with ID '${phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation.`,
      );
    }
    let body: unknown;
    try {
      body = await readJson(ctx);
    } catch (err) {
      if (err instanceof BodyError) return reject(100, err.message);
      throw err;
    }
    const recipient = to(body);

    const fault = state.faults.take('whatsapp', recipient);
    if (fault && fault.kind !== 'no_receipt') {
      if (fault.retryAfter !== null) ctx.set('Retry-After', String(fault.retryAfter));
      switch (fault.kind) {
        case 'http_500':
          return reject(fault.code ?? 131000, fault.message ?? 'Something went wrong', fault.kind, recipient, 500);
        case 'http_429':
          return reject(
            fault.code ?? 130429,
            fault.message ?? 'Cloud API message throughput has been reached.',
            fault.kind,
            recipient,
            429,
          );
        case 'timeout':
          await state.life.sleep(state.options.timeoutFaultMs);
          return reject(2, fault.message ?? 'Service temporarily unavailable', fault.kind, recipient, 504);
        default:
          return reject(fault.code ?? 131000, fault.message ?? 'Simulated error', fault.kind, recipient);
      }
    }

    const result = validateMessage(body, {
      templates: state.config.templates,
      strictTemplates: state.config.strictTemplates,
      managed: (name, language) => managedTemplate(state, name, language),
    });
    if (!result.ok) return reject(result.problem.code, result.problem.details, null, recipient);
    const { msg } = result;
    const payload = body as Record<string, unknown>;

    const throttled = state.limiter.admit(phoneNumberId, msg.waId);
    if (throttled === 130429) return reject(130429, 'Cloud API message throughput has been reached.', null, recipient);
    if (throttled === 131056) {
      return reject(
        131056,
        'Message failed to send because there were too many messages sent from this phone number to the same phone number in a short period of time.',
        null,
        recipient,
      );
    }

    const now = Date.now();
    const lastInbound = state.wa.windows.get(windowKey(phoneNumberId, msg.waId));
    const insideWindow = lastInbound !== undefined && now - lastInbound < WINDOW_MS;
    // Undeliverable numbers fail regardless of the window: there is no WhatsApp user to reach.
    const asyncError = isUndeliverable(msg.waId) ? 131026 : !insideWindow && msg.type !== 'template' ? 131047 : null;
    const key = ctx.get('x-idempotency-key') || null;
    const original = key ? state.wa.byKey.get(key) : undefined;

    const record: WaRecord = {
      seq: state.nextSeq(),
      id: wamid(msg.waId),
      phoneNumberId,
      to: msg.to,
      waId: msg.waId,
      type: msg.type,
      category: msg.category,
      payload,
      status: 'accepted',
      errors: asyncError === null ? null : [statusError(asyncError)],
      insideWindow,
      idempotencyKey: key,
      duplicates: 0,
      duplicateOf: original?.id ?? null,
      noReceipt: fault?.kind === 'no_receipt',
      request: { headers: headersOfInterest(ctx), body: payload },
      history: [{ status: 'accepted', at: new Date(now).toISOString() }],
      createdAt: now,
    };
    // Graph has no idempotency: a repeated key is still a second real message, only flagged here.
    if (original) original.duplicates += 1;
    else if (key) state.wa.byKey.set(key, record);
    state.wa.messages.push(record);
    state.wa.byId.set(record.id, record);
    state.log.info({ wamid: record.id, to: msg.waId, type: msg.type, asyncError }, 'whatsapp message accepted');
    startWaTimeline(state, record);
    answerAsCustomer(state, record);

    const message: Record<string, unknown> = { id: record.id };
    if (msg.type === 'template') message.message_status = 'accepted';
    ctx.body = { messaging_product: 'whatsapp', contacts: [{ input: msg.to, wa_id: msg.waId }], messages: [message] };
  });

  return r;
}

type SimFault = SimState['rejections'][number]['fault'];

export function graphError(ctx: Context, code: number, details: string, status: number = graphHttpStatus(code)): void {
  ctx.status = status;
  ctx.body = graphEnvelope(code, details);
  if (code === 190) ctx.set('WWW-Authenticate', 'OAuth "Facebook Platform" "invalid_token" "Invalid OAuth access token"');
}
