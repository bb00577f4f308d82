// The WhatsApp Cloud API's template management (notes: templates §1): POST/GET
// /{WABA_ID}/message_templates, GET /{TEMPLATE_ID}, DELETE /{WABA_ID}/message_templates?name=&hsm_id=,
// and the `message_template_status_update` field of the WABA's webhook. Failures are ProviderResults
// like every other Graph call: a refusal keeps Meta's code, throttles and outages are retryable.
import { isRecord, type ProviderResult } from '../http.js';
import { graphFailure, graphRequest, type WhatsAppCloudOptions } from './client.js';
import { decodeUtf8 } from '../../domain/platform/utf8.js';
import type { ProviderTemplate, TemplateStatusEvent, TemplateSubmission, WebhookRequest } from '../types.js';

const FIELDS = 'id,name,language,status,category,components,rejected_reason';
/** Meta's "content in this language already exists" (a duplicate name and language on the WABA). */
const DUPLICATE_SUBCODES = new Set([2388024, 2388023]);
/** Meta's answer for an id that names nothing (or nothing we may see). */
const UNKNOWN_OBJECT = 100;
const PAGE_LIMIT = 100;
const MAX_PAGES = 200;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const rec = (v: unknown): Record<string, unknown> => (isRecord(v) ? v : {});

function templateOf(v: unknown): ProviderTemplate | null {
  const t = rec(v);
  const id = str(t.id);
  const name = str(t.name);
  const language = str(t.language);
  if (!id || !name || !language) return null;
  const reason = str(t.rejected_reason);
  return {
    providerTemplateId: id,
    name,
    language,
    status: str(t.status) ?? 'PENDING',
    category: str(t.category) ?? 'UTILITY',
    reason: reason && reason !== 'NONE' ? reason : null,
    components: list(t.components),
  };
}

export class WhatsAppTemplatesClient {
  constructor(private readonly o: WhatsAppCloudOptions) {}

  private call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: object) {
    return graphRequest(this.o, method, path, body);
  }

  async submit(
    waba: string,
    t: TemplateSubmission,
  ): Promise<ProviderResult<{ providerTemplateId: string; status: string; category: string }>> {
    const res = await this.call('POST', `/${encodeURIComponent(waba)}/message_templates`, {
      name: t.name,
      language: t.language,
      category: t.category,
      components: t.components,
      ...(t.allowCategoryChange !== undefined ? { allow_category_change: t.allowCategoryChange } : {}),
    });
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) {
      const f = graphFailure(reply);
      const err = rec(rec(reply.json).error);
      if (typeof err.error_subcode === 'number' && DUPLICATE_SUBCODES.has(err.error_subcode)) return { ...f, code: 'duplicate' };
      return f;
    }
    const j = rec(reply.json);
    const id = str(j.id);
    if (!id) return { ok: false, permanent: false, code: 'invalid_response', message: reply.text.slice(0, 200), httpStatus: reply.status };
    return { ok: true, value: { providerTemplateId: id, status: str(j.status) ?? 'PENDING', category: str(j.category) ?? t.category } };
  }

  async get(id: string): Promise<ProviderResult<ProviderTemplate>> {
    const res = await this.call('GET', `/${encodeURIComponent(id)}?fields=${FIELDS}`);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) {
      const f = graphFailure(reply);
      return f.permanent && f.code === String(UNKNOWN_OBJECT) ? { ...f, code: 'not_found' } : f;
    }
    const t = templateOf(reply.json);
    if (!t) return { ok: false, permanent: false, code: 'invalid_response', message: reply.text.slice(0, 200), httpStatus: reply.status };
    return { ok: true, value: t };
  }

  async list(waba: string, filter: { status?: string; name?: string } = {}): Promise<ProviderResult<ProviderTemplate[]>> {
    const out: ProviderTemplate[] = [];
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const q = new URLSearchParams({ fields: FIELDS, limit: String(PAGE_LIMIT) });
      if (filter.status) q.set('status', filter.status);
      if (filter.name) q.set('name', filter.name);
      if (after) q.set('after', after);
      const res = await this.call('GET', `/${encodeURIComponent(waba)}/message_templates?${q}`);
      if (!res.ok) return res.failure;
      const { reply } = res;
      if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
      const j = rec(reply.json);
      for (const t of list(j.data)) {
        const read = templateOf(t);
        if (read) out.push(read);
      }
      const paging = rec(j.paging);
      after = str(rec(paging.cursors).after);
      if (!after || !paging.next) break;
    }
    return { ok: true, value: out };
  }

  async remove(waba: string, name: string, id: string): Promise<ProviderResult<{ deleted: boolean }>> {
    const q = new URLSearchParams({ name, hsm_id: id });
    const res = await this.call('DELETE', `/${encodeURIComponent(waba)}/message_templates?${q}`);
    if (!res.ok) return res.failure;
    const { reply } = res;
    if (reply.status < 200 || reply.status >= 300) return graphFailure(reply);
    return { ok: true, value: { deleted: rec(reply.json).success === true } };
  }
}

/** Cheap test before a parse: most webhooks (statuses, messages) never carry a template update. */
const MENTIONS_TEMPLATE = Buffer.from('message_template_status_update');

/** The `message_template_status_update` changes of a verified WhatsApp webhook, in the order listed. */
export function parseTemplateWebhook(req: WebhookRequest): TemplateStatusEvent[] {
  if (!req.rawBody.includes(MENTIONS_TEMPLATE)) return [];
  const text = decodeUtf8(req.rawBody);
  if (text === null) return [];
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return [];
  }
  const events: TemplateStatusEvent[] = [];
  for (const entry of list(rec(payload).entry)) {
    const waba = str(rec(entry).id);
    for (const change of list(rec(entry).changes)) {
      if (rec(change).field !== 'message_template_status_update') continue;
      const v = rec(rec(change).value);
      // Meta sends the id as a number: stringified, so a large id keeps every digit as written.
      const id = str(v.message_template_id);
      const event = str(v.event);
      if (!waba || !id || !event) continue;
      // A pause or a disable says why in other_info.title (FIRST_PAUSE…), its reason being NONE.
      const given = str(v.reason);
      const reason = given && given !== 'NONE' ? given : str(rec(v.other_info).title);
      events.push({
        businessAccountId: waba,
        providerTemplateId: id,
        name: str(v.message_template_name),
        language: str(v.message_template_language),
        event,
        reason: reason && reason !== 'NONE' ? reason : null,
      });
    }
  }
  return events;
}
