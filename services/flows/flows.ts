import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../../config.js';
import { DomainError, notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { numericId } from '../platform/ids.js';
import { pageAnswer, pageOf } from '../platform/pagination.js';
import { toE164 } from '../platform/phones.js';
import { emitEvent } from '../webhooks/index.js';
import { resolveWhatsAppSender } from '../messaging/index.js';
import {
  BUNDLE_FORMAT,
  BUNDLE_VERSION,
  MAX_BUNDLE_BYTES,
  canonicalJson,
  checkDefinition,
  type EndReason,
  type FlowDefinition,
} from '../../domain/flows/index.js';
import { executeUpdateWithStart } from '../../temporal/starters.js';
import { flowSessionStarter, flowSessionWorkflowId } from '../../workflows/flows/flow-session.starter.js';
import type { FlowSessionState } from '../../workflows/flows/flow-session.js';
import {
  endSessionRow,
  flowOfAccount,
  flowsPage,
  insertSession,
  insertStep,
  liveSessionOf,
  loadFlowDefinition,
  moveSession,
  publishDraft,
  sessionOfAccount,
  sessionsPage,
  stepsOf,
  type NewStep,
  type SessionRow,
} from './store.js';
import {
  exportQuery,
  flowListQuery,
  flowView,
  loadBody,
  publishBody,
  sessionListQuery,
  sessionView,
  startBody,
  stepView,
} from './schemas.js';

// Flows (docs/flows.md). The operator loads definitions (checked strictly, never edited here); the
// business reads them, publishes a draft, exports a bundle, starts a session for a customer, lists
// sessions and their steps and ends one. A session is flowSessionWorkflow; its row and its events
// (flow.session.started, flow.session.ended) are written by its activities, each once.

export interface FlowServiceDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue'>;
}

const MAX_PARAMETERS_BYTES = 16 * 1024;

const flowOf = async (rc: RequestContext, id: number | string) => {
  const row = await flowOfAccount(rc.em, rc.account.id, numericId(id, 'Flow'));
  if (!row) throw notFound('Flow');
  return row;
};

const sessionOf = async (rc: RequestContext, flowId: number, uid: string) => {
  const row = /^FN[0-9a-f]{32}$/.test(uid) ? await sessionOfAccount(rc.em, rc.account.id, uid) : null;
  if (!row || row.flow_id !== flowId) throw notFound('Session');
  return row;
};

const refuse = (status: 'conflict', message: string, reason: string, details?: unknown) =>
  new DomainError(status, message, { reason, details });

// ---- The operator's load -------------------------------------------------------------------------

function fromBundle(bundle: Record<string, unknown>): { name: string; definition: unknown; commit: string | null } {
  if (JSON.stringify(bundle).length > MAX_BUNDLE_BYTES)
    throw new DomainError('too_large', `A bundle may be at most ${MAX_BUNDLE_BYTES} bytes.`);
  const errors: Record<string, string[]> = {};
  if (bundle.format !== BUNDLE_FORMAT) errors['bundle.format'] = [`The bundle format must be ${BUNDLE_FORMAT}.`];
  if (bundle.version !== BUNDLE_VERSION) errors['bundle.version'] = [`This service reads bundle version ${BUNDLE_VERSION}.`];
  if (typeof bundle.name !== 'string' || !bundle.name.trim() || bundle.name.length > 100)
    errors['bundle.name'] = ['The bundle names its flow.'];
  if (typeof bundle.checksum !== 'string' || bundle.checksum !== checksumOf(bundle.definition))
    errors['bundle.checksum'] = ['The checksum does not match the definition (the bundle was changed or cut).'];
  if (Object.keys(errors).length) throw validationFailed(errors);
  return {
    name: String(bundle.name).trim(),
    definition: bundle.definition,
    commit: typeof bundle.commit_message === 'string' ? bundle.commit_message : null,
  };
}

/** Loads a definition (or a bundle) as the flow's new draft revision; a definition that does not hold is 422 and nothing is written. */
export async function loadFlow(rc: RequestContext, body: FromSchema<typeof loadBody>) {
  let name: string;
  let raw: unknown;
  let commit: string | null;
  if (body.bundle !== undefined) {
    if (body.definition !== undefined) throw validationFailed({ bundle: ['Give a bundle or a definition, not both.'] });
    ({ name, definition: raw, commit } = fromBundle(body.bundle));
    if (body.name !== undefined) name = body.name.trim();
    if (body.commit_message !== undefined) commit = body.commit_message;
  } else {
    if (body.name === undefined) throw validationFailed({ name: ['The name is required.'] });
    if (body.definition === undefined) throw validationFailed({ definition: ['The definition is required.'] });
    name = body.name.trim();
    raw = body.definition;
    commit = body.commit_message ?? null;
  }
  const { errors, definition } = checkDefinition(raw);
  if (!definition) throw validationFailed(errors, `The flow definition does not hold: ${Object.values(errors)[0]?.[0] ?? ''}`);
  return flowView(await loadFlowDefinition(rc.em, rc.account.id, name, definition, commit));
}

// ---- The business's reads and publication ----------------------------------------------------------

export async function listFlows(rc: RequestContext, q: FromSchema<typeof flowListQuery>) {
  const page = pageOf(q);
  const { total, rows } = await flowsPage(rc.em, rc.account.id, { status: q.status }, { limit: page.perPage, offset: page.offset });
  return pageAnswer('flows', rows.map(flowView), page, total);
}

export async function getFlow(rc: RequestContext, id: number | string) {
  return flowView(await flowOf(rc, id));
}

/** Publishes the draft: sessions started from now on walk it; running ones keep their revision. Publishing what is published is a no-op. */
export async function publishFlow(rc: RequestContext, id: number | string, body: FromSchema<typeof publishBody>) {
  const flow = await flowOf(rc, id);
  if (body.revision !== undefined && body.revision !== flow.revision)
    throw refuse('conflict', `The draft is at revision ${flow.revision}, not ${body.revision}.`, 'revision_moved', {
      revision: flow.revision,
    });
  if (flow.status === 'published' && flow.published_revision === flow.revision) return flowView(flow);
  const done = await publishDraft(rc.em, rc.account.id, flow.id, flow.revision);
  if (!done) throw refuse('conflict', 'The draft changed while it was being published; read it and publish again.', 'revision_moved');
  return flowView(done);
}

function checksumOf(definition: unknown): string {
  return `sha256:${crypto.createHash('sha256').update(canonicalJson(definition)).digest('hex')}`;
}

/** The flow as a versioned document another account's operator can load (its checksum checked there). */
export async function exportFlow(rc: RequestContext, id: number | string, q: FromSchema<typeof exportQuery>) {
  const flow = await flowOf(rc, id);
  const side = q.revision ?? (flow.published_definition ? 'published' : 'draft');
  if (side === 'published' && !flow.published_definition)
    throw refuse('conflict', 'The flow has never been published; export its draft (revision=draft).', 'flow_not_published');
  const definition = side === 'published' ? flow.published_definition! : flow.definition;
  return {
    format: BUNDLE_FORMAT as typeof BUNDLE_FORMAT,
    version: BUNDLE_VERSION as typeof BUNDLE_VERSION,
    name: flow.name,
    revision: side === 'published' ? flow.published_revision! : flow.revision,
    status: side === 'published' ? ('published' as const) : ('draft' as const),
    commit_message: flow.commit_message,
    exported_at: new Date().toISOString(),
    definition,
    checksum: checksumOf(definition),
  };
}

// ---- Sessions -------------------------------------------------------------------------------------

export async function listSessions(rc: RequestContext, id: number | string, q: FromSchema<typeof sessionListQuery>) {
  const flow = await flowOf(rc, id);
  const page = pageOf(q);
  let customer: string | undefined;
  if (q.customer !== undefined) {
    const e164 = toE164(q.customer);
    if (!e164) throw validationFailed({ customer: ['The customer must be a phone number in international format.'] });
    customer = e164;
  }
  const { total, rows } = await sessionsPage(
    rc.em,
    rc.account.id,
    flow.id,
    { status: q.status, customer },
    { limit: page.perPage, offset: page.offset },
  );
  return pageAnswer('sessions', rows.map(sessionView), page, total);
}

export async function getSession(rc: RequestContext, id: number | string, uid: string) {
  const flow = await flowOf(rc, id);
  return sessionView(await sessionOf(rc, flow.id, uid));
}

export async function listSessionSteps(rc: RequestContext, id: number | string, uid: string) {
  const flow = await flowOf(rc, id);
  const session = await sessionOf(rc, flow.id, uid);
  return { steps: (await stepsOf(rc.em, rc.account.id, session.uid)).map(stepView) };
}

/**
 * Starts a session of the published revision for one customer: the workflow writes the session's
 * row (and flow.session.started) before this answers. A customer has one live session in an account
 * (a reply in a chat cannot say which flow it answers): a second is 409 session_active, naming it.
 */
export async function startSession(rc: RequestContext, deps: FlowServiceDeps, id: number | string, body: FromSchema<typeof startBody>) {
  const flow = await flowOf(rc, id);
  const customer = toE164(body.to);
  if (!customer) throw validationFailed({ to: ['The recipient must be a phone number in international format.'] });
  const parameters = body.parameters ?? {};
  if (JSON.stringify(parameters).length > MAX_PARAMETERS_BYTES)
    throw validationFailed({ parameters: ['The parameters may be at most 16 KB.'] });
  if (!flow.published_definition || flow.published_revision === null)
    throw refuse('conflict', 'The flow has no published revision; publish its draft first.', 'flow_not_published');
  // The number the session writes from: one of the account's, else 422 before anything starts.
  await resolveWhatsAppSender(rc, body.sender_id);
  const live = await liveSessionOf(rc.em, rc.account.id, customer);
  if (live) throw sessionActive(live);
  const definition = flow.published_definition as unknown as FlowDefinition;
  const sessionUid = `FN${crypto.randomUUID().replace(/-/g, '')}`;
  const opened = await executeUpdateWithStart(
    deps,
    flowSessionStarter,
    { accountId: rc.account.id, sessionUid, flowId: flow.id },
    [
      {
        accountId: rc.account.id,
        sessionUid,
        flowId: flow.id,
        revision: flow.published_revision,
        customer,
        definition,
        parameters,
        senderId: body.sender_id ?? null,
      },
    ],
    'opened',
    [],
  );
  if (!opened.ok) {
    const other = await sessionOfAccount(rc.em, rc.account.id, opened.liveSession);
    throw other
      ? sessionActive(other)
      : refuse('conflict', 'The customer has a live session.', 'session_active', { session_uid: opened.liveSession });
  }
  return sessionView(opened.session);
}

const sessionActive = (s: SessionRow) =>
  refuse('conflict', `The customer has a live session (${s.uid}, flow ${s.flow_id}); end it first.`, 'session_active', {
    session_uid: s.uid,
    flow_id: s.flow_id,
  });

/**
 * Ends a live session now (Studio's Status=ended): its workflow stops whatever it was doing, a wait
 * for a reply included, and writes the end (flow.session.ended, reason ended). An ended session is 409.
 */
export async function endSession(rc: RequestContext, deps: FlowServiceDeps, id: number | string, uid: string) {
  const flow = await flowOf(rc, id);
  const session = await sessionOf(rc, flow.id, uid);
  if (session.status === 'ended')
    throw refuse('conflict', `The session ended already (${session.end_reason}).`, 'session_ended', { end_reason: session.end_reason });
  try {
    await deps.temporal.workflow.getHandle(flowSessionWorkflowId(rc.account.id, session.uid)).executeUpdate<FlowSessionState, []>('end');
  } catch (err) {
    // The session ended on its own between the read and the update (its workflow closed): 409 as above.
    const now = await sessionOfAccount(rc.em.fork(), rc.account.id, session.uid);
    if (now?.status === 'ended')
      throw refuse('conflict', `The session ended already (${now.end_reason}).`, 'session_ended', { end_reason: now.end_reason });
    // No workflow behind a live row (it was lost): the row is ended here, as the workflow would have.
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    await closeSession(rc.em, {
      accountId: rc.account.id,
      sessionUid: session.uid,
      reason: 'ended',
      error: null,
      state: session.current_state ?? '',
    });
  }
  return sessionView((await sessionOfAccount(rc.em.fork(), rc.account.id, session.uid))!);
}

// ---- What the session's activities write -----------------------------------------------------------

export type OpenResult = { ok: true; session: SessionRow } | { ok: false; liveSession: string };

const sessionEventFields = (s: SessionRow) => ({
  session_uid: s.uid,
  flow_id: s.flow_id,
  revision: s.revision,
  customer: s.customer,
  status: s.status,
  current_state: s.current_state,
});

/** A session as its workflow opens it: the revision it walks and where it starts. */
export interface OpenSessionInput {
  accountId: number;
  sessionUid: string;
  flowId: number;
  revision: number;
  customer: string;
  parameters: Record<string, unknown>;
  initialState: string;
}

/** Writes the session's row and flow.session.started once; refused when the customer has a live session in the account. */
export async function openSession(em: EntityManager, a: OpenSessionInput): Promise<OpenResult> {
  return em.transactional(async (tx) => {
    const row = await insertSession(tx, { ...a, uid: a.sessionUid, currentState: a.initialState });
    if (row) {
      await emitEvent(tx, a.accountId, 'flow.session.started', sessionEventFields(row));
      return { ok: true, session: row };
    }
    const mine = await sessionOfAccount(tx, a.accountId, a.sessionUid);
    if (mine) return { ok: true, session: mine };
    const live = await liveSessionOf(tx, a.accountId, a.customer);
    // Neither written nor live: the live one ended between the two statements; the activity's retry writes it.
    if (!live) throw new Error('the customer’s live session ended meanwhile; retry');
    return { ok: false, liveSession: live.uid };
  });
}

/** A step, and where the session is now. */
export async function recordStep(em: EntityManager, s: NewStep): Promise<void> {
  await em.transactional(async (tx) => {
    await insertStep(tx, s);
    if (s.next) await moveSession(tx, s.accountId, s.sessionUid, s.next);
  });
}

/** Ends the session's row and emits flow.session.ended with why, once. */
export async function closeSession(
  em: EntityManager,
  a: { accountId: number; sessionUid: string; reason: EndReason; error: string | null; state: string },
): Promise<void> {
  await em.transactional(async (tx) => {
    const row = await endSessionRow(tx, a.accountId, a.sessionUid, a.reason, a.error);
    if (row) await emitEvent(tx, a.accountId, 'flow.session.ended', { ...sessionEventFields(row), end_reason: a.reason, error: a.error });
  });
}
