// The Cloud API's template management (notes: templates §1): POST/GET /{waba}/message_templates,
// GET /{template_id}, DELETE /{waba}/message_templates?name=[&hsm_id=], the review clock and the
// signed `message_template_status_update` webhooks. What a review decides is the test's to choose,
// by the template's name prefix:
//   reject_…  → REJECTED (reason: /_sim config rejectReason, default INVALID_FORMAT)
//   instant_… → APPROVED in the create answer itself (no review wait)
//   pause_…   → APPROVED, then PAUSED (FIRST_PAUSE)
//   disable_… → APPROVED, then DISABLED
//   refuse_…  → refused at once by the create call (Graph 400, code 100, subcode 2388047): Meta's own
//               synchronous checks that no rule of ours foresees
//   hold_…    → stays PENDING until POST /_sim/whatsapp/templates/{id}/status decides it
//   anything else → APPROVED after reviewDelayMs
// An approved template becomes sendable (whatsapp-template.ts reads this registry first).
import { Router } from '@koa/router';
import type { Context } from 'koa';
import { randomBytes } from 'node:crypto';
import { BodyError, readJson } from './body.js';
import { isObj } from './graph-errors.js';
import { metaJson } from './signing.js';
import type { SimState } from './state.js';
import { unixSeconds } from './util.js';
import { deliver } from './webhooks.js';

export interface SimTemplate {
  seq: number;
  id: string;
  waba: string;
  name: string;
  language: string;
  category: string;
  components: Record<string, unknown>[];
  status: string;
  reason: string;
  /** Parameters a send must give (from the components' placeholders; a media or location header takes one). */
  headerParams: number;
  bodyParams: number;
  createdAt: number;
}

export interface TemplatesState {
  byId: Map<string, SimTemplate>;
  reviewDelayMs: number;
  /** false: no status-update webhooks (the receiver must poll). */
  webhooks: boolean;
  rejectReason: string;
  seq: number;
  /** Every create call, for tests to count submissions. */
  creates: number;
}

export function createTemplatesState(): TemplatesState {
  return { byId: new Map(), reviewDelayMs: 300, webhooks: true, rejectReason: 'INVALID_FORMAT', seq: 0, creates: 0 };
}

export function resetTemplatesState(s: TemplatesState): void {
  s.byId.clear();
  s.reviewDelayMs = 300;
  s.webhooks = true;
  s.rejectReason = 'INVALID_FORMAT';
  s.creates = 0;
}

/** The managed template a send names, by name and language (any WABA: the simulator does not tie numbers to WABAs). */
export function managedTemplate(state: SimState, name: string, language: string): SimTemplate | undefined {
  return [...state.templates.byId.values()].find((t) => t.name === name && t.language === language);
}

// --- Graph errors of template creation (notes §1.8): code 100 with Meta's subcodes -------------------

class CreateProblem extends Error {
  constructor(
    readonly subcode: number,
    readonly title: string,
    readonly details: string,
    readonly code = 100,
  ) {
    super(details);
  }
}

function createError(ctx: Context, p: CreateProblem): void {
  ctx.status = 400;
  ctx.body = {
    error: {
      message: 'Invalid parameter',
      type: 'OAuthException',
      code: p.code,
      error_subcode: p.subcode,
      is_transient: false,
      error_user_title: p.title,
      error_user_msg: p.details,
      fbtrace_id: randomBytes(12).toString('base64url'),
    },
  };
}

const placeholders = (text: string) => [...text.matchAll(/\{\{\s*([^{}]*?)\s*\}\}/g)].map((m) => m[1]);

/** Meta's checks of a submission, first problem wins; the send parameter counts when it holds. */
function checkComponents(components: unknown): { headerParams: number; bodyParams: number } {
  if (!Array.isArray(components) || components.length === 0)
    throw new CreateProblem(2388047, 'Message template components are missing', 'Param components must be a non-empty array.');
  let body = 0;
  let header = 0;
  let bodies = 0;
  for (const c of components) {
    if (!isObj(c) || typeof c.type !== 'string') throw new CreateProblem(2388047, 'Invalid component', 'Each component needs a type.');
    const type = c.type.toUpperCase();
    const text = typeof c.text === 'string' ? c.text : '';
    const example = isObj(c.example) ? c.example : {};
    if (type === 'BODY') {
      bodies++;
      if (text.length > 1024) throw new CreateProblem(2388040, 'Field is too long', 'The body may have up to 1024 characters.');
      const vars = new Set(placeholders(text));
      const trimmed = text.trim();
      if (vars.size && (/^\{\{/.test(trimmed) || /\}\}$/.test(trimmed)))
        throw new CreateProblem(
          2388299,
          'Variables can’t be at the start or end of the template',
          'Move the variable away from the start or end.',
        );
      const rows = Array.isArray(example.body_text) ? example.body_text : [];
      const row: unknown = rows[0];
      if (vars.size && (!Array.isArray(row) || row.length !== vars.size))
        throw new CreateProblem(
          2388047,
          'Message template "components" param is missing expected field(s)',
          `The body has ${vars.size} variable(s); example.body_text must give ${vars.size} sample value(s).`,
        );
      body = vars.size;
    } else if (type === 'HEADER') {
      const format = typeof c.format === 'string' ? c.format.toUpperCase() : 'TEXT';
      if (format === 'TEXT') {
        if (text.length > 60) throw new CreateProblem(2388040, 'Field is too long', 'The header may have up to 60 characters.');
        const vars = new Set(placeholders(text));
        if (vars.size > 1) throw new CreateProblem(2388047, 'Header format is incorrect', 'A header may have at most one variable.');
        header = vars.size;
      } else header = 1;
    } else if (type === 'FOOTER') {
      if (text.length > 60) throw new CreateProblem(2388040, 'Field is too long', 'The footer may have up to 60 characters.');
      if (placeholders(text).length) throw new CreateProblem(2388073, 'Footer format is incorrect', 'A footer may not have variables.');
    } else if (type === 'BUTTONS') {
      const buttons = Array.isArray(c.buttons) ? c.buttons : [];
      if (buttons.length === 0 || buttons.length > 10)
        throw new CreateProblem(2388047, 'Too many buttons', `A template may have 1 to 10 buttons; got ${buttons.length}.`);
    } else throw new CreateProblem(2388047, 'Invalid component', `Unknown component type ${c.type}.`);
  }
  if (bodies !== 1) throw new CreateProblem(2388047, 'Message template body is missing', 'A template needs exactly one BODY component.');
  return { headerParams: header, bodyParams: body };
}

// --- Review clock and webhooks -------------------------------------------------------------------------

/** Moves the template to `event` and tells the receiver (a signed message_template_status_update), unless webhooks are off. */
export async function setTemplateStatus(
  state: SimState,
  t: SimTemplate,
  event: string,
  reason: string,
  opts: { webhook?: boolean; title?: string } = {},
): Promise<void> {
  t.status = event === 'FLAGGED' || event === 'REINSTATED' || event === 'UNPAUSE' ? 'APPROVED' : event;
  t.reason = reason;
  state.log.info({ templateId: t.id, name: t.name, event, reason }, 'whatsapp template status');
  const url = state.config.waWebhookUrl;
  if (!(opts.webhook ?? state.templates.webhooks) || !url) return;
  const value: Record<string, unknown> = {
    event,
    message_template_id: Number(t.id),
    message_template_name: t.name,
    message_template_language: t.language,
    message_template_category: t.category,
    reason,
  };
  if (opts.title) value.other_info = { title: opts.title, description: `${opts.title} of ${t.name}` };
  if (event === 'DISABLED') value.disable_info = { disable_date: Number(unixSeconds()) };
  const payload = {
    object: 'whatsapp_business_account',
    entry: [{ id: t.waba, time: Number(unixSeconds()), changes: [{ field: 'message_template_status_update', value }] }],
  };
  const request = metaJson(state.options.waAppSecret, payload);
  await deliver(state, { provider: 'whatsapp', kind: 'whatsapp.template', messageId: t.id, url, request });
}

function review(state: SimState, t: SimTemplate): void {
  if (t.name.startsWith('hold_') || t.status !== 'PENDING') return;
  state.life.spawn(`wa-template:${t.id}`, async (gen) => {
    if (!(await gen.sleep(state.templates.reviewDelayMs))) return;
    if (t.status !== 'PENDING' || !state.templates.byId.has(t.id)) return;
    if (t.name.startsWith('reject_')) return setTemplateStatus(state, t, 'REJECTED', state.templates.rejectReason);
    await setTemplateStatus(state, t, 'APPROVED', 'NONE');
    if (t.name.startsWith('pause_') || t.name.startsWith('disable_')) {
      if (!(await gen.sleep(state.templates.reviewDelayMs))) return;
      if (t.name.startsWith('pause_')) await setTemplateStatus(state, t, 'PAUSED', 'NONE', { title: 'FIRST_PAUSE' });
      else await setTemplateStatus(state, t, 'DISABLED', 'NONE', { title: 'DISABLED' });
    }
  });
}

const graphView = (t: SimTemplate, fields: string[] | null) => {
  const all: Record<string, unknown> = {
    id: t.id,
    name: t.name,
    language: t.language,
    status: t.status,
    category: t.category,
    components: t.components,
    rejected_reason: t.status === 'REJECTED' ? t.reason : 'NONE',
    parameter_format: 'POSITIONAL',
  };
  if (!fields) return all;
  return Object.fromEntries(Object.entries(all).filter(([k]) => k === 'id' || fields.includes(k)));
};

const cursorOf = (seq: number) => Buffer.from(`tpl:${seq}`).toString('base64url');
const seqOf = (cursor: string) => {
  const m = /^tpl:(\d+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  return m ? Number(m[1]) : null;
};

// --- Graph routes --------------------------------------------------------------------------------------

export function whatsappTemplatesRouter(state: SimState): Router {
  const s = state.templates;
  const r = new Router({ prefix: '/whatsapp/:version' });
  const fail = (ctx: Context, code: number, message: string, status = 400) => {
    ctx.status = status;
    ctx.body = { error: { message, type: 'OAuthException', code, fbtrace_id: randomBytes(12).toString('base64url') } };
  };
  const admitted = (ctx: Context): boolean => {
    if (ctx.get('authorization') !== `Bearer ${state.options.waAccessToken}`) {
      fail(ctx, 190, 'Invalid OAuth access token - Cannot parse access token', 401);
      return false;
    }
    return true;
  };
  const fieldsOf = (ctx: Context) =>
    typeof ctx.query.fields === 'string' && ctx.query.fields !== '' ? ctx.query.fields.split(',').map((f) => f.trim()) : null;

  r.post('/:waba/message_templates', async (ctx) => {
    if (!admitted(ctx)) return;
    let b: unknown;
    try {
      b = await readJson(ctx);
    } catch (err) {
      if (err instanceof BodyError) return fail(ctx, 100, err.message);
      throw err;
    }
    if (!isObj(b)) return fail(ctx, 100, 'The request body must be a JSON object.');
    s.creates++;
    const waba = ctx.params.waba ?? '';
    const name = typeof b.name === 'string' ? b.name : '';
    const language = typeof b.language === 'string' ? b.language : '';
    const category = typeof b.category === 'string' ? b.category.toUpperCase() : '';
    if (!/^[a-z0-9_]{1,512}$/.test(name)) return fail(ctx, 100, 'Param name must contain only lowercase letters, numbers and underscores.');
    if (!/^[a-z]{2,3}(_[A-Z]{2,3})?$/.test(language)) return fail(ctx, 100, `Param language '${language}' is not a valid language code.`);
    if (!['MARKETING', 'UTILITY', 'AUTHENTICATION'].includes(category))
      return fail(ctx, 100, 'Param category must be one of {MARKETING, UTILITY, AUTHENTICATION}.');
    let shape: { headerParams: number; bodyParams: number };
    try {
      shape = checkComponents(b.components);
    } catch (err) {
      if (err instanceof CreateProblem) return createError(ctx, err);
      throw err;
    }
    if (name.startsWith('refuse_'))
      return createError(
        ctx,
        new CreateProblem(
          2388047,
          'Message template "components" param is invalid',
          'The body text does not meet the template guidelines.',
        ),
      );
    const duplicate = [...s.byId.values()].some((t) => t.waba === waba && t.name === name && t.language === language);
    if (duplicate)
      return createError(
        ctx,
        new CreateProblem(2388024, 'Content in this language already exists', `The template ${name} already exists in ${language}.`),
      );
    const seq = ++s.seq;
    const t: SimTemplate = {
      seq,
      id: String(594425479000000 + seq),
      waba,
      name,
      language,
      category,
      components: b.components as Record<string, unknown>[],
      status: name.startsWith('instant_') ? 'APPROVED' : 'PENDING',
      reason: 'NONE',
      ...shape,
      createdAt: Date.now(),
    };
    s.byId.set(t.id, t);
    state.log.info({ templateId: t.id, waba, name, language }, 'whatsapp template submitted');
    ctx.body = { id: t.id, status: t.status, category: t.category };
    review(state, t);
  });

  r.get('/:waba/message_templates', (ctx) => {
    if (!admitted(ctx)) return;
    const waba = ctx.params.waba ?? '';
    const q = ctx.query;
    const limit = typeof q.limit === 'string' && /^\d+$/.test(q.limit) ? Math.min(1000, Math.max(1, Number(q.limit))) : 25;
    const after = typeof q.after === 'string' && q.after !== '' ? seqOf(q.after) : 0;
    if (after === null) return fail(ctx, 100, `Invalid cursor: ${String(q.after)}`);
    const all = [...s.byId.values()]
      .filter((t) => t.waba === waba)
      .filter((t) => typeof q.status !== 'string' || t.status === q.status.toUpperCase())
      .filter((t) => typeof q.name !== 'string' || t.name === q.name)
      .filter((t) => typeof q.language !== 'string' || t.language === q.language)
      .sort((a, b) => a.seq - b.seq);
    const rest = all.filter((t) => t.seq > after);
    const shown = rest.slice(0, limit);
    const paging: Record<string, unknown> = {};
    if (shown.length) {
      paging.cursors = { before: cursorOf(shown[0].seq), after: cursorOf(shown[shown.length - 1].seq) };
      if (rest.length > shown.length) {
        const next = new URL(`${ctx.protocol}://${ctx.host}${ctx.path}`);
        next.searchParams.set('limit', String(limit));
        next.searchParams.set('after', cursorOf(shown[shown.length - 1].seq));
        paging.next = next.toString();
      }
    }
    ctx.body = { data: shown.map((t) => graphView(t, fieldsOf(ctx))), paging };
  });

  r.delete('/:waba/message_templates', (ctx) => {
    if (!admitted(ctx)) return;
    const waba = ctx.params.waba ?? '';
    const name = typeof ctx.query.name === 'string' ? ctx.query.name : '';
    const hsm = typeof ctx.query.hsm_id === 'string' ? ctx.query.hsm_id : null;
    if (!name) return fail(ctx, 100, "Param 'name' is required.");
    const gone = [...s.byId.values()].filter((t) => t.waba === waba && t.name === name && (hsm === null || t.id === hsm));
    if (!gone.length) return fail(ctx, 100, `Template ${name} was not found.`);
    for (const t of gone) s.byId.delete(t.id);
    ctx.body = { success: true };
  });

  // A numeric id that is no template is handed on (the catalogue routes answer for catalogue ids).
  r.get('/:templateId', async (ctx, next) => {
    const t = s.byId.get(ctx.params.templateId ?? '');
    if (!t) return next();
    if (!admitted(ctx)) return;
    ctx.body = graphView(t, fieldsOf(ctx));
  });

  return r;
}

/**
 * Test controls under /_sim/whatsapp/templates: the list, config {reviewDelayMs, webhooks,
 * rejectReason}, and POST /{id}/status {event, reason?, title?, webhook?} to decide a review (or
 * pause, disable, flag) as the test wants.
 */
export function templatesSimRouter(state: SimState): Router {
  const s = state.templates;
  const r = new Router({ prefix: '/_sim/whatsapp/templates' });
  const view = () => ({ reviewDelayMs: s.reviewDelayMs, webhooks: s.webhooks, rejectReason: s.rejectReason, creates: s.creates });

  r.get('/', (ctx) => {
    const list = [...s.byId.values()].sort((a, b) => a.seq - b.seq);
    ctx.body = { count: list.length, creates: s.creates, templates: list };
  });
  r.get('/config', (ctx) => {
    ctx.body = view();
  });
  r.post('/config', async (ctx) => {
    const b = await readJson(ctx);
    const errors: string[] = [];
    if (!isObj(b)) errors.push('body must be a JSON object');
    else {
      if (b.reviewDelayMs !== undefined && (typeof b.reviewDelayMs !== 'number' || b.reviewDelayMs < 0))
        errors.push('reviewDelayMs must be a number ≥ 0');
      if (b.webhooks !== undefined && typeof b.webhooks !== 'boolean') errors.push('webhooks must be a boolean');
      if (b.rejectReason !== undefined && typeof b.rejectReason !== 'string') errors.push('rejectReason must be a string');
    }
    if (errors.length || !isObj(b)) {
      ctx.status = 400;
      ctx.body = { error: errors.join('; ') };
      return;
    }
    if (typeof b.reviewDelayMs === 'number') s.reviewDelayMs = b.reviewDelayMs;
    if (typeof b.webhooks === 'boolean') s.webhooks = b.webhooks;
    if (typeof b.rejectReason === 'string') s.rejectReason = b.rejectReason;
    ctx.body = view();
  });
  r.post('/:id/status', async (ctx) => {
    const t = s.byId.get(ctx.params.id ?? '');
    if (!t) {
      ctx.status = 404;
      ctx.body = { error: `no template ${ctx.params.id}` };
      return;
    }
    const b = await readJson(ctx);
    if (!isObj(b) || typeof b.event !== 'string') {
      ctx.status = 400;
      ctx.body = { error: 'event is required (APPROVED, REJECTED, PAUSED, DISABLED, FLAGGED, REINSTATED…)' };
      return;
    }
    await setTemplateStatus(state, t, b.event.toUpperCase(), typeof b.reason === 'string' ? b.reason : 'NONE', {
      webhook: typeof b.webhook === 'boolean' ? b.webhook : undefined,
      title: typeof b.title === 'string' ? b.title : undefined,
    });
    ctx.body = t;
  });
  return r;
}
