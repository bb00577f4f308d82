import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import {
  TEMPLATE_CATEGORIES,
  TEMPLATE_LANGUAGE_PATTERN,
  TEMPLATE_LIMITS,
  TEMPLATE_NAME_PATTERN,
  TEMPLATE_STATUSES,
  checkTemplateComponents,
  sendParameterCounts,
  type TemplateCategory,
} from '../../domain/templates/index.js';
import { executeUpdateWithStart, startWorkflow } from '../../temporal/starters.js';
import { templateReviewStarter } from '../../workflows/templates/template-review.starter.js';
import { templateCallStarter } from '../../workflows/templates/template-call.starter.js';
import type { TemplateReviewState } from '../../workflows/templates/template-review.js';
import type { TemplateCall, TemplateCallOutcome } from '../../activities/templates/template.js';
import type { RequestContext } from '../platform/context.js';
import { providerCallWithin } from '../platform/provider-call.js';
import { DomainError, notFound, validationFailed, type FieldErrors } from '../platform/errors.js';
import { pageAnswer, pageOf, pageQueryProperties } from '../platform/pagination.js';
import { whatsappSenders } from '../messaging/index.js';
import { deleteTemplateRow, insertTemplate, templateOfAccount, templatesForSend, templatesPage, type TemplateRow } from './store.js';
import { templateView } from './view.js';

// Chat-channel message templates (Endpoints > Leads, templates, forms, flows, posts, occasions;
// docs/templates.md). Creating one submits it to the provider in the same request: the template's
// review workflow makes the submission and the request waits for its answer (the submission
// update). Refresh, sync and delete are one provider call each, made by a short workflow the request
// waits for. A WABA is one of the account's own (the business accounts of its WhatsApp numbers): a
// request never names another tenant's.

export interface TemplateServiceDeps {
  temporal: Client;
  config: Pick<
    Config,
    'taskQueue' | 'templateReviewPollSeconds' | 'templateReviewPollMaxSeconds' | 'templateReviewMaxHours' | 'temporalCallTimeoutMs'
  >;
}

/** How long a request waits for the provider's answer (the submission, a refresh, a delete) before it answers as things stand. */
export const PROVIDER_WAIT_MS = 15_000;
/** A sync lists every approved template of each WABA: it may take longer. */
export const SYNC_WAIT_MS = 60_000;

const button = {
  type: 'object',
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      maxLength: 32,
      description: 'QUICK_REPLY, URL, PHONE_NUMBER, COPY_CODE, OTP (AUTHENTICATION), FLOW, VOICE_CALL',
    },
    text: { type: 'string', maxLength: 200 },
    url: { type: 'string', maxLength: 2000 },
    phone_number: { type: 'string', maxLength: 32 },
    example: { description: 'URL: ["https://…/sample"]; COPY_CODE: "SAMPLE"' },
  },
} as const;

const component = {
  type: 'object',
  required: ['type'],
  additionalProperties: false,
  properties: {
    type: { enum: ['HEADER', 'BODY', 'FOOTER', 'BUTTONS'] },
    format: { type: 'string', maxLength: 16, description: 'HEADER only: TEXT, IMAGE, VIDEO, DOCUMENT or LOCATION' },
    text: {
      type: 'string',
      maxLength: 4096,
      description: 'BODY (≤1024), TEXT HEADER (≤60) or FOOTER (≤60); positional placeholders {{1}}, {{2}}, …',
    },
    example: {
      type: 'object',
      properties: {
        body_text: { type: 'array', items: { type: 'array', items: { type: 'string', maxLength: 1024 } } },
        header_text: { type: 'array', items: { type: 'string', maxLength: 60 } },
        header_handle: { type: 'array', items: { type: 'string', maxLength: 2048 } },
      },
      description: 'one sample value per placeholder: body_text [[…]], header_text […], header_handle [media handle]',
    },
    buttons: { type: 'array', maxItems: 50, items: button, description: 'BUTTONS only: at most 10' },
    add_security_recommendation: { type: 'boolean', description: 'AUTHENTICATION BODY only' },
    code_expiration_minutes: { type: 'integer', minimum: 1, maximum: 90, description: 'AUTHENTICATION FOOTER only' },
  },
} as const;

const wabaField = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'a WhatsApp Business Account (WABA) of the account (GET /whatsapp/accounts); absent: the account’s first',
} as const;

export const templateCreateBody = {
  type: 'object',
  required: ['name', 'category', 'components'],
  additionalProperties: false,
  properties: {
    business_account_id: wabaField,
    name: {
      type: 'string',
      minLength: 1,
      maxLength: TEMPLATE_LIMITS.name,
      pattern: TEMPLATE_NAME_PATTERN,
      description: 'lower-case letters, digits and underscores; one name in one language per business account',
    },
    language: {
      type: 'string',
      minLength: 2,
      maxLength: TEMPLATE_LIMITS.language,
      pattern: TEMPLATE_LANGUAGE_PATTERN,
      default: 'en',
      description: 'the provider’s locale code: en, en_US, sw, pt_BR…',
    },
    category: { enum: TEMPLATE_CATEGORIES },
    components: {
      type: 'array',
      minItems: 1,
      maxItems: 8,
      items: component,
      description: 'exactly one BODY; at most one HEADER, FOOTER and BUTTONS',
    },
  },
} as const;

export const templateListQuery = {
  type: 'object',
  properties: {
    status: { enum: TEMPLATE_STATUSES },
    name: { type: 'string', maxLength: TEMPLATE_LIMITS.name },
    language: { type: 'string', maxLength: TEMPLATE_LIMITS.language },
    category: { enum: TEMPLATE_CATEGORIES },
    business_account_id: { type: 'string', maxLength: 64 },
    ...pageQueryProperties,
  },
} as const;

export const templateSyncBody = {
  type: 'object',
  additionalProperties: false,
  properties: { business_account_id: { ...wabaField, description: 'one WABA of the account; absent: every WABA of the account' } },
} as const;

export const templateDeploymentBody = {
  type: 'object',
  required: ['business_account_id'],
  additionalProperties: false,
  properties: { business_account_id: { ...wabaField, description: 'another WABA of the account, where a copy is submitted for review' } },
} as const;

export const templateSyncSchema = {
  type: 'object',
  required: ['business_account_ids', 'imported', 'updated', 'unchanged', 'complete'],
  properties: {
    business_account_ids: { type: 'array', items: { type: 'string' } },
    imported: { type: 'integer', description: 'approved templates new to us' },
    updated: { type: 'integer', description: 'ours whose status the provider changed' },
    unchanged: { type: 'integer' },
    complete: {
      type: 'boolean',
      description: 'false: still running after 60 s; the counts then are zero and it completes in the background',
    },
  },
} as const;

export type TemplateCreateInput = FromSchema<typeof templateCreateBody>;
export type TemplateListQuery = FromSchema<typeof templateListQuery>;
export type TemplateSyncInput = FromSchema<typeof templateSyncBody>;
export type TemplateDeploymentInput = FromSchema<typeof templateDeploymentBody>;

/** The account's WABAs: the business accounts of its WhatsApp numbers, in the order of the numbers. */
async function accountWabas(rc: RequestContext): Promise<string[]> {
  const numbers = await whatsappSenders(rc.em, rc.account.id);
  return [...new Set(numbers.map((n) => n.business_account_id).filter((w): w is string => !!w))];
}

/** The WABA a request names (one of the account's, else 422: another tenant's is not told apart from none), or the first. */
async function wabaOf(rc: RequestContext, named: string | undefined, field = 'business_account_id'): Promise<string> {
  const wabas = await accountWabas(rc);
  if (named === undefined) {
    if (!wabas.length) throw validationFailed({ [field]: ['No WhatsApp business account is configured for this account.'] });
    return wabas[0];
  }
  if (!wabas.includes(named.trim()))
    throw validationFailed({ [field]: ['The business account must be a WhatsApp business account of this account.'] });
  return named.trim();
}

/** The caller's template by id; another account's (or a malformed id) is 404. */
async function loadTemplate(rc: RequestContext, id: string): Promise<TemplateRow> {
  if (!/^\d{1,18}$/.test(id)) throw notFound('Template');
  const row = await templateOfAccount(rc.em, rc.account.id, id);
  if (!row) throw notFound('Template');
  return row;
}

const exists = (waba: string, name: string, language: string) =>
  new DomainError('conflict', `The template ${name} (${language}) already exists on business account ${waba}.`, {
    reason: 'template_exists',
  });

/** Saves the template and submits it: 201 with its status (pending, or already approved/rejected); a refusal is 422 and keeps nothing. */
async function saveAndSubmit(
  rc: RequestContext,
  deps: TemplateServiceDeps,
  t: { waba: string; name: string; language: string; category: TemplateCategory; components: readonly unknown[]; deployedFrom?: string },
) {
  const { errors, shape } = checkTemplateComponents(t.category, t.components);
  if (!shape) throw validationFailed(errors);
  const row = await insertTemplate(rc.em, {
    accountId: rc.account.id,
    businessAccountId: t.waba,
    name: t.name,
    language: t.language,
    category: t.category,
    components: t.components,
    headerParams: shape.headerParams,
    bodyParams: shape.bodyParams,
    source: t.deployedFrom ? 'deployed' : 'created',
    deployedFrom: t.deployedFrom ?? null,
  });
  if (!row) throw exists(t.waba, t.name, t.language);
  let state: TemplateReviewState;
  try {
    state = await submit(deps, rc.account.id, row.id);
  } catch (err) {
    // Nothing half-written: a template whose review could not start is not kept.
    await deleteTemplateRow(rc.em, rc.account.id, row.id);
    throw err;
  }
  if (state.phase === 'refused') {
    const r = state.refusal!;
    throw new DomainError('invalid', `The provider refused the template: ${r.message}`, {
      errors: { components: [`${r.message}${r.code ? ` (provider code ${r.code})` : ''}`] },
      reason: 'provider_refused',
      code: r.code,
    });
  }
  const now = await templateOfAccount(rc.em, rc.account.id, row.id);
  if (!now) throw notFound('Template');
  return templateView(now);
}

function submit(deps: TemplateServiceDeps, accountId: number, templateId: string): Promise<TemplateReviewState> {
  const c = deps.config;
  const input = {
    accountId,
    templateId,
    pollFirstSeconds: c.templateReviewPollSeconds,
    pollMaxSeconds: c.templateReviewPollMaxSeconds,
    maxReviewSeconds: c.templateReviewMaxHours * 3600,
  };
  return deps.temporal.connection.withDeadline(Date.now() + c.temporalCallTimeoutMs + PROVIDER_WAIT_MS, () =>
    executeUpdateWithStart(deps, templateReviewStarter, { accountId, templateId }, [input], 'submission', [PROVIDER_WAIT_MS]),
  );
}

/** POST /whatsapp/templates: submits the template for review in the same request. */
export async function createTemplate(rc: RequestContext, deps: TemplateServiceDeps, input: TemplateCreateInput) {
  const waba = await wabaOf(rc, input.business_account_id);
  return saveAndSubmit(rc, deps, {
    waba,
    name: input.name,
    language: input.language ?? 'en',
    category: input.category,
    components: input.components,
  });
}

/** GET /whatsapp/templates: newest first, filtered; page-number pagination (default 20, cap 100). */
export async function listTemplates(rc: RequestContext, q: TemplateListQuery) {
  const { page, perPage, offset } = pageOf(q);
  const { total, rows } = await templatesPage(
    rc.em,
    rc.account.id,
    { status: q.status, name: q.name, language: q.language, category: q.category, businessAccountId: q.business_account_id },
    { limit: perPage, offset },
  );
  return pageAnswer('templates', rows.map(templateView), { page, perPage }, total);
}

/** GET /whatsapp/templates/{id}: the template and its status as last heard. */
export async function getTemplate(rc: RequestContext, id: string) {
  return templateView(await loadTemplate(rc, id));
}

/** Runs one provider call of the template management and waits for it a bounded time; a refusal is 502 with the provider's words. */
async function callProvider(
  deps: TemplateServiceDeps,
  accountId: number,
  call: TemplateCall,
  resource: string,
  waitMs: number,
): Promise<TemplateCallOutcome | null> {
  const handle = await startWorkflow(deps, templateCallStarter, { accountId, requestId: randomUUID(), resource }, [{ accountId, call }]);
  return providerCallWithin(handle, waitMs, {
    refused: 'The chat provider refused the request',
    unreachable: 'The chat provider could not be reached.',
  });
}

/** POST /whatsapp/templates/{id}/refresh: the provider's status now (a change emits template.status_changed). */
export async function refreshTemplate(rc: RequestContext, deps: TemplateServiceDeps, id: string) {
  const row = await loadTemplate(rc, id);
  await callProvider(deps, rc.account.id, { kind: 'refresh', templateId: row.id }, row.id, PROVIDER_WAIT_MS);
  return templateView(await loadTemplate(rc, id));
}

/** POST /whatsapp/templates/sync: imports the approved templates of one WABA of the account, or of each. */
export async function syncTemplates(rc: RequestContext, deps: TemplateServiceDeps, input: TemplateSyncInput) {
  const wabas = input.business_account_id !== undefined ? [await wabaOf(rc, input.business_account_id)] : await accountWabas(rc);
  if (!wabas.length) throw validationFailed({ business_account_id: ['No WhatsApp business account is configured for this account.'] });
  const out = await callProvider(deps, rc.account.id, { kind: 'sync', businessAccountIds: wabas }, 'sync', SYNC_WAIT_MS);
  const counts = out?.kind === 'sync' ? out : { imported: 0, updated: 0, unchanged: 0 };
  return {
    business_account_ids: wabas,
    imported: counts.imported,
    updated: counts.updated,
    unchanged: counts.unchanged,
    complete: out !== null,
  };
}

/** POST /whatsapp/templates/{id}/deployments: an approved template submitted to another WABA of the account (a template of its own). */
export async function deployTemplate(rc: RequestContext, deps: TemplateServiceDeps, id: string, input: TemplateDeploymentInput) {
  const source = await loadTemplate(rc, id);
  const waba = await wabaOf(rc, input.business_account_id);
  const errors: FieldErrors = {};
  if (waba === source.business_account_id) errors.business_account_id = ['The template is on this business account already; name another.'];
  if (Object.keys(errors).length) throw validationFailed(errors);
  if (source.status !== 'approved')
    throw new DomainError('conflict', `Only an approved template can be deployed; this one is ${source.status}.`, {
      reason: 'template_not_approved',
    });
  return saveAndSubmit(rc, deps, {
    waba,
    name: source.name,
    language: source.language,
    category: source.category,
    components: source.components as unknown[],
    deployedFrom: source.id,
  });
}

/** DELETE /whatsapp/templates/{id}: deleted at the provider (this translation only), then here. */
export async function deleteTemplate(rc: RequestContext, deps: TemplateServiceDeps, id: string) {
  const row = await loadTemplate(rc, id);
  const out = await callProvider(deps, rc.account.id, { kind: 'delete', templateId: row.id }, row.id, PROVIDER_WAIT_MS);
  return { id: Number(row.id), deleted: true as const, pending: out === null };
}

/**
 * What a template send must hold when the template is known to us (one of the account's, that name
 * and language on the sender's WABA): approved, and the parameters its header and body take. A name
 * we have never seen is left to the provider (it may have been made in WhatsApp Manager; sync imports
 * it): null, as for a send that holds.
 */
export async function checkTemplateSend(
  rc: RequestContext,
  waba: string | null,
  t: { name: string; language: string; components: readonly unknown[] },
): Promise<FieldErrors | null> {
  const known = await templatesForSend(rc.em, rc.account.id, waba, t.name, t.language);
  if (!known.length) return null;
  const approved = known.find((r) => r.status === 'approved');
  if (!approved) {
    const s = known[0].status;
    const why = s === 'pending' || s === 'submitting' || s === 'in_appeal' ? `still in review (${s})` : s;
    return { 'template.name': [`The template ${t.name} (${t.language}) is ${why}; only an approved template can be sent.`] };
  }
  const given = sendParameterCounts(t.components);
  const errors: FieldErrors = {};
  if (given.bodyParams !== approved.body_params)
    errors['template.components'] = [
      `The template ${t.name} (${t.language}) takes ${approved.body_params} body parameter(s); ${given.bodyParams} were given.`,
    ];
  if (given.headerParams !== approved.header_params)
    (errors['template.components'] ??= []).push(
      `The template ${t.name} (${t.language}) takes ${approved.header_params} header parameter(s); ${given.headerParams} were given.`,
    );
  return Object.keys(errors).length ? errors : null;
}
