import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import {
  DEFINITION_DEFAULTS,
  definitionProblems,
  flowJson,
  flowName,
  type FormDefinition,
  type FormSessionMode,
  type FormSessionStatus,
  type Question,
} from '../../domain/forms/index.js';
import type { Config } from '../../config.js';
import { DomainError, forbidden, notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { iso } from '../platform/time.js';
import { newSecret } from '../platform/secrets.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { toE164 } from '../platform/phones.js';
import { chatOfMessage, whatsappSenders, type WhatsAppNumber } from '../messaging/index.js';
import { startWorkflow, signalWorkflow } from '../../temporal/starters.js';
import { formSessionStarter, formSessionWorkflowId } from '../../workflows/forms/form-session.starter.js';
import {
  answerTotals,
  formOf,
  formPage,
  formSettingsOf,
  insertForm,
  insertSession,
  insertVersion,
  deleteSession,
  saveDraft,
  saveFormSettings,
  sessionOf,
  sessionPage,
  updateActiveSession,
  versionOf,
  versionsOf,
  type FormRecord,
  type SessionRecord,
  type VersionRecord,
} from './store.js';

// Forms (Endpoints > Leads, templates, forms, flows, posts, occasions; docs/forms.md): build a form
// (a draft of typed questions), publish it (a frozen, numbered version), send a version to a phone
// number or a chat (one session per recipient, each its own workflow), read the answers per
// recipient and in aggregate. Every path asks the account's Forms module first: switched off by
// the operator, it answers 403 (module_disabled). Another account's form or session is not found.

export interface FormServiceDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue'>;
}

export const newFormUid = () => `frm_${newSecret(20)}`;
export const newSessionUid = () => `fss_${newSecret(24)}`;

async function admit(rc: RequestContext): Promise<void> {
  const s = await formSettingsOf(rc.em, rc.account.id);
  if (!s.enabled) throw forbidden('The Forms module is switched off for this account.', 'module_disabled');
}

// ---- Presentation ------------------------------------------------------------------------------

async function formView(rc: RequestContext, row: FormRecord) {
  const versions = await versionsOf(rc.em, row);
  return {
    id: row.uid,
    status: row.latest_version > 0 ? ('published' as const) : ('draft' as const),
    latest_version: row.latest_version > 0 ? row.latest_version : null,
    draft_changed: row.draft_changed,
    draft: row.draft,
    versions: versions.map((v) => ({ version: v.version, published_at: iso(v.published_at) })),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const versionView = (form: FormRecord, v: VersionRecord) => ({
  id: `${form.uid}/v${v.version}`,
  form_id: form.uid,
  version: v.version,
  definition: v.definition,
  whatsapp_flow: { name: flowName(form.uid, v.version), flow_json: flowJson(v.definition) },
  published_at: iso(v.published_at),
});

export const sessionView = (formUid: string, s: SessionRecord) => ({
  id: s.uid,
  form_id: formUid,
  version: s.version,
  recipient: s.recipient,
  conversation_id: s.conversation_id,
  mode: s.mode,
  status: s.status,
  answers: s.answers,
  current_question: s.current_question,
  end_reason: s.end_reason,
  created_at: iso(s.created_at),
  updated_at: iso(s.updated_at),
  submitted_at: iso(s.submitted_at),
  ended_at: iso(s.ended_at),
});

// ---- Definitions -------------------------------------------------------------------------------

type DefinitionInput = Partial<Omit<FormDefinition, 'questions'>> & {
  questions?: (Omit<Question, 'required'> & { required?: boolean })[];
};

/** The whole definition with its defaults, or 422 naming every problem (nothing is stored). */
function completeDefinition(input: DefinitionInput, base?: FormDefinition): FormDefinition {
  const name = input.name ?? base?.name ?? '';
  const title = input.title ?? base?.title ?? name.slice(0, 60);
  const def: FormDefinition = {
    name,
    title,
    intro: input.intro ?? base?.intro ?? title,
    submit_label: input.submit_label ?? base?.submit_label ?? DEFINITION_DEFAULTS.submit_label,
    thank_you: input.thank_you !== undefined ? input.thank_you : (base?.thank_you ?? DEFINITION_DEFAULTS.thank_you),
    remind_after_minutes: input.remind_after_minutes ?? base?.remind_after_minutes ?? DEFINITION_DEFAULTS.remind_after_minutes,
    expire_after_minutes: input.expire_after_minutes ?? base?.expire_after_minutes ?? DEFINITION_DEFAULTS.expire_after_minutes,
    max_attempts: input.max_attempts ?? base?.max_attempts ?? DEFINITION_DEFAULTS.max_attempts,
    questions: input.questions ? input.questions.map((q) => ({ ...q, required: q.required ?? true })) : (base?.questions ?? []),
  };
  const problems = definitionProblems(def);
  if (Object.keys(problems).length) throw validationFailed(problems);
  return def;
}

async function formOrNotFound(rc: RequestContext, ref: string, lock = false): Promise<FormRecord> {
  const row = await formOf(rc.em, rc.account.id, ref, lock);
  if (!row) throw notFound('Form');
  return row;
}

export async function createForm(rc: RequestContext, body: DefinitionInput) {
  await admit(rc);
  const def = completeDefinition(body);
  return formView(rc, await insertForm(rc.em, rc.account.id, newFormUid(), def));
}

export async function listForms(rc: RequestContext, query: { page?: number; per_page?: number; limit?: number }) {
  await admit(rc);
  const page = pageOf(query);
  const { rows, total } = await formPage(rc.em, rc.account.id, page.offset, page.perPage);
  return pageAnswer('forms', await Promise.all(rows.map((r) => formView(rc, r))), page, total);
}

export async function getForm(rc: RequestContext, ref: string) {
  await admit(rc);
  return formView(rc, await formOrNotFound(rc, ref));
}

/** Edits the draft only: published versions stay as they were; the next publish makes a new one. */
export async function updateForm(rc: RequestContext, ref: string, body: DefinitionInput) {
  await admit(rc);
  return rc.em.transactional(async (tx) => {
    const form = await formOf(tx, rc.account.id, ref, true);
    if (!form) throw notFound('Form');
    const def = completeDefinition(body, form.draft);
    return formView({ ...rc, em: tx }, await saveDraft(tx, form.id, def));
  });
}

/** Freezes the draft as the next version; a draft unchanged since the last publish answers that version again. */
export async function publishForm(rc: RequestContext, ref: string) {
  await admit(rc);
  return rc.em.transactional(async (tx) => {
    const form = await formOf(tx, rc.account.id, ref, true);
    if (!form) throw notFound('Form');
    if (!form.draft_changed && form.latest_version > 0) return versionView(form, (await versionOf(tx, form, form.latest_version))!);
    // A draft stored before a rule was added is checked again: a version is only ever a sound definition.
    const problems = definitionProblems(form.draft);
    if (Object.keys(problems).length) throw validationFailed(problems);
    return versionView(form, await insertVersion(tx, form));
  });
}

export async function getFormVersion(rc: RequestContext, ref: string, version: string) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  const n = /^v?(\d{1,9})$/.exec(version);
  const v = n ? await versionOf(rc.em, form, Number(n[1])) : null;
  if (!v) throw notFound('Form version');
  return versionView(form, v);
}

// ---- Sends -------------------------------------------------------------------------------------

export interface SendBody {
  to?: string;
  conversation_id?: string;
  sender_id?: string;
  version?: number;
  mode?: FormSessionMode;
}

/** The chat the form goes into: the business number and the customer (422 when it names nothing of the account). */
async function chatOf(rc: RequestContext, body: SendBody): Promise<{ from: WhatsAppNumber; customer: string }> {
  if ((body.to === undefined) === (body.conversation_id === undefined))
    throw validationFailed({ to: ['Give exactly one of to (a phone number) and conversation_id.'] });
  const numbers = await whatsappSenders(rc.em, rc.account.id);
  if (!numbers.length) throw validationFailed({ sender_id: ['The account has no WhatsApp number to send a form from.'] });
  const pick = (id: string | undefined, field: string) => {
    if (id === undefined) return numbers[0];
    const n = numbers.find((x) => x.provider_phone_number_id === id || x.number === id || x.number === toE164(id));
    if (!n) throw validationFailed({ [field]: ['That is not one of the account’s WhatsApp numbers.'] });
    return n;
  };
  if (body.to !== undefined) {
    const customer = toE164(body.to);
    if (!customer) throw validationFailed({ to: ['The to field must be a phone number with its country code first.'] });
    return { from: pick(body.sender_id, 'sender_id'), customer };
  }
  const id = body.conversation_id!.trim();
  const stored = /^whatsapp:([^:]{1,64}):(\+?\d{6,15})$/.exec(id);
  if (stored) {
    const customer = toE164(stored[2].startsWith('+') ? stored[2] : `+${stored[2]}`);
    if (!customer) throw validationFailed({ conversation_id: ['The conversation’s customer is not a phone number.'] });
    return { from: pick(stored[1], 'conversation_id'), customer };
  }
  const chat = await chatOfMessage(rc.em, rc.account.id, id);
  if (!chat) throw validationFailed({ conversation_id: ['No chat of this account has that id.'] });
  const customer = chat.direction === 'inbound' ? chat.sender : chat.recipient;
  const pnid = (chat.channel_code ?? '').replace(/^whatsapp:/, '');
  const e164 = customer ? toE164(customer) : null;
  if (!e164) throw validationFailed({ conversation_id: ['The conversation’s customer is not a phone number.'] });
  return { from: pick(pnid || undefined, 'conversation_id'), customer: e164 };
}

/**
 * One session for one recipient, then its workflow (form-session/<account>/<session>). A workflow
 * that cannot be started takes its session back out (nothing half-written: the send answers 503).
 */
export async function sendForm(rc: RequestContext, deps: FormServiceDeps, ref: string, body: SendBody) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  if (form.latest_version === 0)
    throw new DomainError('conflict', 'The form has no published version: publish it before sending it.', { reason: 'not_published' });
  const versionNo = body.version ?? form.latest_version;
  const version = await versionOf(rc.em, form, versionNo);
  if (!version) throw validationFailed({ version: [`The form has no published version ${versionNo}.`] });
  const { from, customer } = await chatOf(rc, body);
  const mode: FormSessionMode = body.mode ?? 'native';
  const uid = newSessionUid();
  const session = await insertSession(rc.em, {
    uid,
    accountId: rc.account.id,
    formId: form.id,
    version: version.version,
    recipient: customer,
    senderId: from.provider_phone_number_id,
    conversationId: `whatsapp:${from.provider_phone_number_id}:${customer}`,
    mode,
  });
  const def = version.definition;
  try {
    await startWorkflow(deps, formSessionStarter, { accountId: rc.account.id, sessionUid: uid, formUid: form.uid }, [
      {
        accountId: rc.account.id,
        sessionUid: uid,
        remindAfterSeconds: def.remind_after_minutes * 60,
        expireAfterSeconds: def.expire_after_minutes * 60,
      },
    ]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) {
      await deleteSession(rc.em, session.id);
      throw err;
    }
  }
  return sessionView(form.uid, session);
}

// ---- Sessions and answers ----------------------------------------------------------------------

export async function listFormSessions(
  rc: RequestContext,
  ref: string,
  query: { page?: number; per_page?: number; limit?: number; status?: FormSessionStatus; recipient?: string },
) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  const page = pageOf(query);
  let recipient: string | undefined;
  if (query.recipient !== undefined) {
    recipient = toE164(query.recipient) ?? undefined;
    if (!recipient) throw validationFailed({ recipient: ['The recipient must be a phone number with its country code.'] });
  }
  const { rows, total } = await sessionPage(rc.em, rc.account.id, form.id, { status: query.status, recipient }, page.offset, page.perPage);
  return pageAnswer(
    'sessions',
    rows.map((s) => sessionView(form.uid, s)),
    page,
    total,
  );
}

async function sessionOfForm(rc: RequestContext, form: FormRecord, uid: string, lock = false) {
  const s = await sessionOf(rc.em, rc.account.id, uid, lock);
  if (!s || s.form_id !== form.id) throw notFound('Form session');
  return s;
}

export async function getFormSession(rc: RequestContext, ref: string, uid: string) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  return sessionView(form.uid, await sessionOfForm(rc, form, uid));
}

/** Ends an active session now (cancelled): its workflow is told and stops waiting; an ended one is 409. */
export async function cancelFormSession(rc: RequestContext, deps: FormServiceDeps, ref: string, uid: string) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  const row = await rc.em.transactional(async (tx) => {
    const s = await sessionOfForm({ ...rc, em: tx }, form, uid, true);
    if (s.status !== 'active')
      throw new DomainError('conflict', `The session has ended already (${s.status}).`, { reason: 'session_ended' });
    return (await updateActiveSession(tx, s.id, { status: 'cancelled', end_reason: 'cancelled', current_question: null, ended: true }))!;
  });
  // The workflow also finds the session ended at its next step; the signal only saves it the wait.
  await signalWorkflow(deps.temporal, formSessionStarter, formSessionWorkflowId(rc.account.id, uid), 'cancel').catch((err: unknown) =>
    rc.log.warn({ err, session: uid }, 'form session workflow not told of its cancel'),
  );
  return sessionView(form.uid, row);
}

/** Per question, what the submitted sessions answered (counts per option; a number's min, max, average). */
export async function formAnswerSummary(rc: RequestContext, ref: string, query: { version?: number }) {
  await admit(rc);
  const form = await formOrNotFound(rc, ref);
  const source = query.version !== undefined ? await versionOf(rc.em, form, query.version) : null;
  if (query.version !== undefined && !source) throw notFound('Form version');
  const def =
    source?.definition ?? (form.latest_version > 0 ? (await versionOf(rc.em, form, form.latest_version))!.definition : form.draft);
  const choiceKeys = def.questions.filter((q) => q.type === 'choice').map((q) => q.key);
  const numberKeys = def.questions.filter((q) => q.type === 'number').map((q) => q.key);
  const t = await answerTotals(rc.em, rc.account.id, form.id, choiceKeys, numberKeys);
  const sessions = { total: 0, active: 0, submitted: 0, expired: 0, cancelled: 0 };
  for (const s of t.statuses) {
    sessions[s.status] = Number(s.n);
    sessions.total += Number(s.n);
  }
  const answered = new Map(t.answered.map((a) => [a.key, Number(a.n)]));
  const num = (v: string | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return {
    form_id: form.uid,
    sessions,
    questions: def.questions.map((q) => {
      const base = { key: q.key, type: q.type, label: q.label, answered: answered.get(q.key) ?? 0 };
      if (q.type === 'choice') {
        const counts = new Map(t.choices.filter((c) => c.key === q.key).map((c) => [c.value, Number(c.n)]));
        return { ...base, options: (q.options ?? []).map((o) => ({ id: o.id, title: o.title, count: counts.get(o.id) ?? 0 })) };
      }
      if (q.type === 'number') {
        const n = t.numbers.find((x) => x.key === q.key);
        return { ...base, min: num(n?.min), max: num(n?.max), average: num(n?.avg) };
      }
      return base;
    }),
  };
}

// ---- The module switch (operator) -------------------------------------------------------------------

const settingsView = (s: { enabled: boolean; updated_at: string | null }) => ({ enabled: s.enabled, updated_at: iso(s.updated_at) });

export async function readFormModule(rc: RequestContext) {
  return settingsView(await formSettingsOf(rc.em, rc.account.id));
}

/** The operator's switch: the account's own keys cannot turn the module back on. */
export async function setFormModule(rc: RequestContext, body: { enabled: boolean }) {
  return settingsView(await saveFormSettings(rc.em, rc.account.id, body.enabled));
}
