// The /_sim control surface: what the simulator saw and sent, and the knobs tests turn. None of this
// exists on the real providers, which is why it lives under its own prefix.
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { readJson } from './body.js';
import { FaultInputError, type Provider } from './faults.js';
import { registerConfig } from './sim-config.js';
import { registerSmsInbound } from './sms-receipts.js';
import type { SimState, WaRecord } from './state.js';
import { digitsOf } from './util.js';
import { registerWhatsAppSim } from './whatsapp-inbound.js';

function query(ctx: Context, name: string): string | null {
  const v = ctx.query[name];
  return typeof v === 'string' && v !== '' ? v : null;
}

function provider(ctx: Context): Provider | null | 'invalid' {
  const p = query(ctx, 'provider');
  if (p === null) return null;
  return p === 'sms' || p === 'whatsapp' ? p : 'invalid';
}

/** `?to=` compares digits so "+255 700..." and "255700..." find the same recipient. */
function byRecipient<T extends { to: string | null }>(ctx: Context, items: T[]): T[] {
  const to = query(ctx, 'to');
  return to === null ? items : items.filter((m) => m.to !== null && digitsOf(m.to) === digitsOf(to));
}

// `payload` is the same object as request.body; listing it twice only bloats the output.
function waView({ payload: _payload, ...rest }: WaRecord): Omit<WaRecord, 'payload'> {
  return rest;
}

export function simRouter(state: SimState): Router {
  const r = new Router({ prefix: '/_sim' });

  r.get('/health', (ctx) => {
    ctx.body = { ok: true };
  });

  r.get('/sms/messages', (ctx) => {
    const messages = byRecipient(ctx, state.sms.messages);
    ctx.body = { count: messages.length, messages };
  });

  r.get('/whatsapp/messages', (ctx) => {
    const messages = byRecipient(ctx, state.wa.messages).map(waView);
    ctx.body = { count: messages.length, messages };
  });

  r.get('/whatsapp/inbound', (ctx) => {
    ctx.body = { count: state.wa.inbound.length, messages: state.wa.inbound };
  });

  r.get('/rejections', (ctx) => {
    const p = provider(ctx);
    const list = byRecipient(ctx, state.rejections).filter((x) => p === null || x.provider === p);
    ctx.body = { count: list.length, rejections: list };
  });

  r.get('/callbacks', (ctx) => {
    const p = provider(ctx);
    const kind = query(ctx, 'kind');
    const messageId = query(ctx, 'messageId');
    const list = state.callbacks.filter(
      (c) => (p === null || c.provider === p) && (kind === null || c.kind === kind) && (messageId === null || c.messageId === messageId),
    );
    ctx.body = { count: list.length, callbacks: list };
  });

  r.get('/faults', (ctx) => {
    ctx.body = { faults: state.faults.list() };
  });

  r.post('/faults', async (ctx) => {
    try {
      const fault = state.faults.add(await readJson(ctx));
      state.log.info({ fault }, 'fault armed');
      ctx.status = 201;
      ctx.body = { fault };
    } catch (err) {
      if (!(err instanceof FaultInputError)) throw err;
      ctx.status = 400;
      ctx.body = { error: err.message };
    }
  });

  r.delete('/faults', (ctx) => {
    const p = provider(ctx);
    if (p === 'invalid') {
      ctx.status = 400;
      ctx.body = { error: "provider must be 'sms' or 'whatsapp'" };
      return;
    }
    ctx.body = { cleared: state.faults.clear(p ?? undefined) };
  });

  r.post('/reset', (ctx) => {
    state.reset();
    state.log.info('simulator reset');
    ctx.body = { ok: true };
  });

  registerConfig(r, state);
  registerSmsInbound(r, state);
  registerWhatsAppSim(r, state);
  return r;
}
