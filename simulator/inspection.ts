// The /_sim control surface: what the simulator saw and sent, and the knobs tests turn. None of this
// exists on the real providers, which is why it lives under its own prefix.
//
// The list endpoints (/sms/messages, /whatsapp/messages, /whatsapp/inbound, /rejections, /callbacks)
// answer {count, <list>} where `count` is always the number of matching records. `?limit=N` returns
// only the first N of them (oldest first) and `?limit=0` none at all, so a poller that only needs the
// count (e.g. "have all 20,000 sends reached the gateway?": GET /_sim/sms/messages?limit=0) pays for
// a number, not for serialising every record. `?limit` combines with the other filters (`to`, ...).
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { readJson } from './body.js';
import { FaultInputError, isProvider, type Provider } from './faults.js';
import { registerConfig } from './sim-config.js';
import { registerSmsInbound } from './sms-receipts.js';
import type { SimState, WaRecord } from './state.js';
import { digitsOf } from './util.js';
import { registerWhatsAppSim } from './whatsapp-inbound.js';
import { registerFormsSim } from './whatsapp-forms.js';
import { registerCatalogueSim } from './meta-catalogue.js';

function query(ctx: Context, name: string): string | null {
  const v = ctx.query[name];
  return typeof v === 'string' && v !== '' ? v : null;
}

/** `?limit=N` (a non-negative integer) caps the returned list; absent means everything. */
function limitOf(ctx: Context): number | null | 'invalid' {
  const v = query(ctx, 'limit');
  if (v === null) return null;
  return /^\d+$/.test(v) ? Number(v) : 'invalid';
}

/** Sets {count, [key]: list (capped by ?limit)}; a malformed limit is a 400. */
function listBody<T>(ctx: Context, key: string, items: T[], view?: (item: T) => unknown): void {
  const limit = limitOf(ctx);
  if (limit === 'invalid') {
    ctx.status = 400;
    ctx.body = { error: 'limit must be a non-negative integer' };
    return;
  }
  const shown = limit === null || limit >= items.length ? items : items.slice(0, limit);
  ctx.body = { count: items.length, [key]: view ? shown.map(view) : shown };
}

function provider(ctx: Context): Provider | null | 'invalid' {
  const p = query(ctx, 'provider');
  if (p === null) return null;
  return isProvider(p) ? p : 'invalid';
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
    listBody(ctx, 'messages', byRecipient(ctx, state.sms.messages));
  });

  r.get('/whatsapp/messages', (ctx) => {
    listBody(ctx, 'messages', byRecipient(ctx, state.wa.messages), waView);
  });

  r.get('/whatsapp/inbound', (ctx) => {
    listBody(ctx, 'messages', state.wa.inbound);
  });

  r.get('/rejections', (ctx) => {
    const p = provider(ctx);
    listBody(
      ctx,
      'rejections',
      byRecipient(ctx, state.rejections).filter((x) => p === null || x.provider === p),
    );
  });

  r.get('/callbacks', (ctx) => {
    const p = provider(ctx);
    const kind = query(ctx, 'kind');
    const messageId = query(ctx, 'messageId');
    const list = state.callbacks.filter(
      (c) => (p === null || c.provider === p) && (kind === null || c.kind === kind) && (messageId === null || c.messageId === messageId),
    );
    listBody(ctx, 'callbacks', list);
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
      ctx.body = { error: "provider must be 'sms', 'whatsapp' or 'payment'" };
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
  registerFormsSim(r, state);
  registerCatalogueSim(r, state);
  return r;
}
