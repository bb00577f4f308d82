import crypto from 'node:crypto';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { OperatorContext, RequestContext } from '../platform/context.js';
import { actorLabel } from '../platform/context.js';
import { conflict, DomainError, forbidden, notFound, quotaExceeded, validationFailed } from '../platform/errors.js';
import { requireAccount } from '../account/index.js';
import { startWorkflow } from '../../temporal/starters.js';
import { agentRunStarter, agentRunWorkflowId } from '../../workflows/agents/agent-run.starter.js';
import type { AgentRunInput } from '../../workflows/agents/agent-run.js';
import { agentToolsTaskQueue, isTerminal } from '../../domain/agents/index.js';
import { endRun } from './progress.js';
import {
  staleQueuedRuns,
  insertRun,
  profileById,
  profileByName,
  runById,
  runOfKey,
  runsPage,
  settingsOf,
  stepsOf,
  type ProfileRecord,
  type RunRecord,
} from './store.js';
import { runView } from './views.js';

// Agent runs as the engine's callers and the operator see them: a prompt submitted to an agent
// becomes a run (a row, then its workflow), read with its steps, listed, cancelled, and its tool
// calls that wait for a person approved or denied.

export interface RunDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue' | 'engineMaxWaitSeconds'>;
}

export interface SubmitInput {
  prompt: string;
  idempotency_key?: string;
  wait_seconds?: number;
}

const KEY_FIELD = 'Idempotency-Key';

/**
 * The Idempotency-Key as the IETF draft sends it, an RFC 8941 sf-string (`"…"`), or the bare token
 * most clients send: 1 to 255 visible ASCII characters either way. Anything else is a 400.
 */
export function idempotencyKeyOf(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const quoted = /^"((?:[\x20-\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/.exec(raw);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : raw;
  if (!/^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/.test(key) || (!quoted && raw.includes('"')))
    throw new DomainError(
      'bad_request',
      `The ${KEY_FIELD} header must be 1 to 255 visible ASCII characters (a quoted string or a bare token).`,
      {
        reason: 'invalid_idempotency_key',
      },
    );
  return key;
}

/** What a key stands for: the agent and the prompt (the wait is how the caller waits, not what it asks). */
const requestHash = (agent: string, prompt: string) =>
  crypto
    .createHash('sha256')
    .update(JSON.stringify([agent, prompt]))
    .digest('hex');

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A run of the account by its uuid; anything that is no uuid names no run (404, never a failed cast). */
const runOf = async (em: RequestContext['em'], accountId: number, runId: string) =>
  UUID.test(runId) ? runById(em, accountId, runId) : null;

const viewWithSteps = async (em: RequestContext['em'], run: RunRecord, opts: { replayed?: boolean } = {}) =>
  runView(run, await stepsOf(em, [run.id]), opts);

/** Whether the account's engine, and the agent, allow runs over the API now: the refusal otherwise. */
async function runnableProfile(rc: RequestContext, agent: string): Promise<ProfileRecord> {
  const profile = await profileByName(rc.em, rc.account.id, agent);
  if (!profile) throw notFound('Agent');
  const settings = await settingsOf(rc.em, rc.account.id);
  if (!settings?.engine_enabled) throw forbidden("This account's agent engine is switched off.", 'engine_disabled');
  if (!settings.api_enabled) throw forbidden("This account's agents are not available over the API.", 'api_unavailable');
  if (!profile.api_enabled) throw forbidden('This agent may not be run over the API.', 'agent_not_runnable');
  if (profile.token_budget !== null && Number(profile.tokens_used) >= Number(profile.token_budget))
    throw quotaExceeded("This agent's token budget is spent.", 'budget_exhausted');
  if (rc.account.billing_mode === 'prepaid' && Number(rc.account.wallet_balance) <= 0)
    throw quotaExceeded("The account's balance does not cover an agent run.", 'insufficient_balance');
  return profile;
}

/**
 * POST /api/engine/agents/{agent}/runs. The run is recorded (queued) and its workflow started; with
 * wait_seconds the answer waits that long for the run to settle. With an Idempotency-Key (per
 * account) the same request answers the same run (replayed), another request with that key is a
 * 422; two requests racing on one key meet on the (account, key) unique constraint.
 */
export async function submitRun(rc: RequestContext, deps: RunDeps, agent: string, input: SubmitInput) {
  const key = idempotencyKeyOf(input.idempotency_key);
  const hash = requestHash(agent, input.prompt);
  if (key !== null) {
    const earlier = await runOfKey(rc.em, rc.account.id, key);
    if (earlier) return replayOf(rc, deps, earlier, hash, input.wait_seconds);
  }
  const profile = await runnableProfile(rc, agent);
  const run = await insertRun(rc.em, {
    id: crypto.randomUUID(),
    account_id: rc.account.id,
    profile_id: profile.id,
    agent_name: profile.name,
    key_id: rc.actor.kind === 'api_key' ? rc.actor.key.id : null,
    prompt: input.prompt,
    idempotency_key: key,
    request_hash: key === null ? null : hash,
  });
  if (!run) {
    const winner = key === null ? null : await runOfKey(rc.em, rc.account.id, key);
    if (!winner) throw conflict(`A request with this ${KEY_FIELD} is being accepted; retry it.`);
    return replayOf(rc, deps, winner, hash, input.wait_seconds);
  }
  await startRun(deps, run, profile);
  return settled(rc, deps, run, input.wait_seconds);
}

async function replayOf(rc: RequestContext, deps: RunDeps, earlier: RunRecord, hash: string, wait: number | undefined) {
  if (earlier.request_hash !== hash)
    throw new DomainError('invalid', `The ${KEY_FIELD} was already used with a different request (run ${earlier.id}).`, {
      reason: 'idempotency_key_reused',
    });
  // A first request that stopped between its row and its start: the replay starts it (a no-op when it did start).
  if (earlier.status === 'queued') {
    const profile = await profileById(rc.em, rc.account.id, earlier.profile_id);
    if (profile) await startRun(deps, earlier, profile);
  }
  return settled(rc, deps, earlier, wait, true);
}

export async function startRun(deps: RunDeps, run: RunRecord, profile: ProfileRecord) {
  const args: AgentRunInput = {
    accountId: run.account_id,
    runId: run.id,
    profileId: profile.id,
    agent: profile.name,
    keyId: run.key_id,
    model: profile.model,
    instructions: profile.instructions,
    prompt: run.prompt,
    grant: { mcpServers: profile.mcp_servers, tools: profile.tools, preapproved: profile.preapproved },
    maxSteps: profile.max_steps,
    maxSeconds: profile.max_seconds,
    toolsTaskQueue: agentToolsTaskQueue(deps.config.taskQueue),
  };
  try {
    await startWorkflow(deps, agentRunStarter, { accountId: run.account_id, runId: run.id }, [args]);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/** The run as it stands after waiting up to `wait` seconds for its workflow to end. */
async function settled(rc: RequestContext, deps: RunDeps, run: RunRecord, wait: number | undefined, replayed = false) {
  const seconds = Math.min(wait ?? 0, deps.config.engineMaxWaitSeconds);
  if (seconds > 0 && !isTerminal(run.status)) {
    const handle = deps.temporal.workflow.getHandle(agentRunWorkflowId(run.account_id, run.id));
    await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, seconds * 1000))]);
  }
  const now = (await runById(rc.em, run.account_id, run.id)) ?? run;
  return viewWithSteps(rc.em, now, { replayed });
}

export async function getRun(rc: RequestContext, runId: string) {
  const run = await runOf(rc.em, rc.account.id, runId);
  if (!run) throw notFound('Run');
  return viewWithSteps(rc.em, run);
}

/** An agent's runs newest first, `limit` at a time; `before` is the last run uuid of the previous page. */
export async function listAgentRuns(rc: RequestContext, agent: string, q: { limit?: number; before?: string }) {
  const profile = await profileByName(rc.em, rc.account.id, agent);
  if (!profile) throw notFound('Agent');
  return runsList(rc.em, rc.account.id, { profileId: profile.id, limit: q.limit, before: q.before });
}

async function runsList(em: RequestContext['em'], accountId: number, q: { profileId?: string; limit?: number; before?: string }) {
  const limit = q.limit ?? 20;
  let before: RunRecord | undefined;
  if (q.before) {
    before = (await runOf(em, accountId, q.before)) ?? undefined;
    if (!before || (q.profileId && before.profile_id !== q.profileId))
      throw validationFailed({ before: ['The before field must name a run of this list.'] });
  }
  const rows = await runsPage(em, accountId, { profileId: q.profileId, before, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const steps = await stepsOf(
    em,
    page.map((r) => r.id),
  );
  return {
    runs: page.map((r) =>
      runView(
        r,
        steps.filter((s) => s.run_id === r.id),
      ),
    ),
    has_more: rows.length > limit,
    next_before: rows.length > limit ? page[page.length - 1].id : null,
  };
}

/** Asks the run to stop (a signal); the run records `cancelled` when its workflow takes it. */
export async function cancelRun(rc: RequestContext, deps: RunDeps, runId: string) {
  return cancelOf(rc.em, deps, rc.account.id, runId, actorLabel(rc.actor));
}

async function cancelOf(em: RequestContext['em'], deps: RunDeps, accountId: number, runId: string, by: string) {
  const run = await runOf(em, accountId, runId);
  if (!run) throw notFound('Run');
  if (isTerminal(run.status)) throw conflict(`The run has already ended (${run.status}).`);
  await deps.temporal.workflow.getHandle(agentRunWorkflowId(accountId, runId)).signal(agentRunStarter.signals!.cancelRun, { by });
  return viewWithSteps(em, run);
}

export interface DecisionInput {
  call_id: string;
  decision: 'approve' | 'deny';
  note?: string;
}

/** Approves or denies the tool call the run waits on (an update: the run has taken it when this answers). */
export async function decideToolCall(rc: RequestContext, deps: RunDeps, runId: string, d: DecisionInput) {
  return decisionOf(rc.em, deps, rc.account.id, runId, d, actorLabel(rc.actor));
}

async function decisionOf(em: RequestContext['em'], deps: RunDeps, accountId: number, runId: string, d: DecisionInput, by: string) {
  const run = await runOf(em, accountId, runId);
  if (!run) throw notFound('Run');
  const pending = run.pending as { call_id?: string } | null;
  if (run.status !== 'requires_action' || !pending) throw conflict('The run is not waiting for a decision.');
  if (pending.call_id !== d.call_id) throw conflict(`The run waits on tool call ${pending.call_id}, not ${d.call_id}.`);
  try {
    await deps.temporal.workflow.getHandle(agentRunWorkflowId(accountId, runId)).executeUpdate(agentRunStarter.updates!.decideToolCall, {
      args: [{ call_id: d.call_id, approve: d.decision === 'approve', by, ...(d.note ? { note: d.note } : {}) }],
    });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw conflict('The run is not waiting for a decision on this call.');
    throw err;
  }
  return viewWithSteps(em, (await runById(em, accountId, runId)) ?? run);
}

// The operator's side: the account's runs, and the same decision and cancellation.

export async function operatorRuns(oc: OperatorContext, accountId: number, q: { limit?: number; before?: string }) {
  await requireAccount(oc, accountId);
  return runsList(oc.em, accountId, q);
}

export async function operatorDecision(oc: OperatorContext, deps: RunDeps, accountId: number, runId: string, d: DecisionInput) {
  await requireAccount(oc, accountId);
  return decisionOf(oc.em, deps, accountId, runId, d, 'operator');
}

export async function operatorCancel(oc: OperatorContext, deps: RunDeps, accountId: number, runId: string) {
  await requireAccount(oc, accountId);
  return cancelOf(oc.em, deps, accountId, runId, 'operator');
}

/**
 * Starts the runs whose workflow start was lost (an API that stopped between the run's row and its
 * start): queued for 30 seconds or more. A second start of a started run is a no-op (REJECT_DUPLICATE).
 */
export async function startRunsLeftBehind(em: RequestContext['em'], deps: RunDeps): Promise<number> {
  const left = await staleQueuedRuns(em, 30_000, 100);
  for (const r of left) {
    const run = await runById(em, r.account_id, r.id);
    const profile = run && (await profileById(em, r.account_id, run.profile_id));
    if (run && profile) await startRun(deps, run, profile);
    else if (run)
      await endRun(em, r.account_id, r.id, {
        status: 'failed',
        output: null,
        reason: 'internal_error',
        error: 'The agent was deleted before the run started.',
      });
  }
  return left.length;
}
