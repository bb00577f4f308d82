// Runtime configuration (/_sim/config). Changes apply all-or-nothing so a typo in one field never
// leaves the simulator half reconfigured in the middle of a test run.
import type { Router } from '@koa/router';
import { readJson } from './body.js';
import { isObj } from './graph-errors.js';
import type { SimState, TemplateDef, WaStatusMode } from './state.js';
import { digitsOf, isHttpUrl } from './util.js';

const STATUS_MODES: WaStatusMode[] = ['in_order', 'skip_delivered', 'duplicate', 'out_of_order'];

export function configView(state: SimState): Record<string, unknown> {
  const c = state.config;
  return {
    receiptDelayMs: c.receiptDelayMs,
    smsInboundUrl: c.smsInboundUrl,
    waWebhookUrl: c.waWebhookUrl,
    optOuts: [...c.optOuts],
    waStatusMode: c.waStatusMode,
    strictTemplates: c.strictTemplates,
    waTemplates: [...c.templates].map(([name, def]) => ({ name, ...def })),
    ...state.limiter.settings,
  };
}

export function registerConfig(router: Router, state: SimState): void {
  router.get('/config', (ctx) => {
    ctx.body = configView(state);
  });

  router.post('/config', async (ctx) => {
    const input = await readJson(ctx);
    if (!isObj(input)) {
      ctx.status = 400;
      ctx.body = { error: 'body must be a JSON object' };
      return;
    }
    const errors: string[] = [];
    const changes: Array<() => void> = [];
    const c = state.config;

    const url = (key: 'smsInboundUrl' | 'waWebhookUrl'): void => {
      const v = input[key];
      if (v === undefined) return;
      if (v !== null && !isHttpUrl(v)) errors.push(`${key} must be an http(s) URL or null`);
      else changes.push(() => (c[key] = v));
    };
    const count = (key: string, apply: (n: number) => void, min = 0): void => {
      const v = input[key];
      if (v === undefined) return;
      if (typeof v !== 'number' || !Number.isFinite(v) || v < min) errors.push(`${key} must be a number ≥ ${min}`);
      else changes.push(() => apply(v));
    };

    url('smsInboundUrl');
    url('waWebhookUrl');
    count('receiptDelayMs', (n) => (c.receiptDelayMs = n));
    count('waThroughputPerSecond', (n) => (state.limiter.settings.waThroughputPerSecond = n), 1);
    count('waPairBurst', (n) => (state.limiter.settings.waPairBurst = n), 1);
    count('waPairIntervalMs', (n) => (state.limiter.settings.waPairIntervalMs = n));
    if (input.optOuts !== undefined) {
      const list = input.optOuts;
      if (!Array.isArray(list) || list.some((n) => typeof n !== 'string' || digitsOf(n) === ''))
        errors.push('optOuts must be an array of phone numbers');
      else changes.push(() => (c.optOuts = new Set(list.map((n: string) => digitsOf(n)))));
    }
    if (input.waStatusMode !== undefined) {
      if (!STATUS_MODES.includes(input.waStatusMode as WaStatusMode)) errors.push(`waStatusMode must be one of ${STATUS_MODES.join(', ')}`);
      else changes.push(() => (c.waStatusMode = input.waStatusMode as WaStatusMode));
    }
    if (input.strictTemplates !== undefined) {
      if (typeof input.strictTemplates !== 'boolean') errors.push('strictTemplates must be a boolean');
      else changes.push(() => (c.strictTemplates = input.strictTemplates as boolean));
    }
    if (input.waTemplates !== undefined) {
      const parsed = parseTemplates(input.waTemplates);
      if (typeof parsed === 'string') errors.push(parsed);
      else changes.push(() => (c.templates = parsed));
    }

    if (errors.length > 0) {
      ctx.status = 400;
      ctx.body = { error: errors.join('; ') };
      return;
    }
    for (const apply of changes) apply();
    ctx.body = configView(state);
  });
}

/** [{name, languages?, bodyParams?, headerParams?, category?}] replaces the whole registry. */
function parseTemplates(v: unknown): Map<string, TemplateDef> | string {
  if (!Array.isArray(v)) return 'waTemplates must be an array';
  const out = new Map<string, TemplateDef>();
  for (const [i, t] of v.entries()) {
    if (!isObj(t) || typeof t.name !== 'string' || t.name === '') return `waTemplates[${i}].name is required`;
    const languages = t.languages ?? (typeof t.language === 'string' ? [t.language] : null);
    if (languages !== null && (!Array.isArray(languages) || languages.some((l) => typeof l !== 'string'))) {
      return `waTemplates[${i}].languages must be an array of language codes`;
    }
    const n = (x: unknown): number | null | string =>
      x === undefined || x === null ? null : typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : 'bad';
    const bodyParams = n(t.bodyParams);
    const headerParams = n(t.headerParams);
    if (bodyParams === 'bad' || headerParams === 'bad') return `waTemplates[${i}] parameter counts must be non-negative integers`;
    out.set(t.name, {
      languages: languages as string[] | null,
      bodyParams: bodyParams as number | null,
      headerParams: headerParams as number | null,
      category: typeof t.category === 'string' ? t.category : 'utility',
    });
  }
  return out;
}
