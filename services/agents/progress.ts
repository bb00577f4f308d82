import type { EntityManager } from '@mikro-orm/postgresql';
import { accountForContext, debitSegments, issuedKey } from '../account/index.js';
import type { AccountRow, KeyRow, UserRow } from '../platform/context.js';
import { emitEvent } from '../webhooks/index.js';
import type { RunReason } from '../../domain/agents/index.js';
import {
  addProfileTokens,
  addRunUsage,
  finishRunRow,
  finishStep,
  insertStep,
  markStarted,
  profileById,
  runRow,
  setWaiting,
  stepOf,
  type RunRecord,
  type StepRecord,
} from './store.js';

// What a run's activities write as it goes: its status, each step once, the usage each step costs
// (debited from the account's wallet like sends) and the agent.run.* events, each in the transaction
// of the change it reports.

export interface Prices {
  agentTokenPrice: string;
  agentToolCallPrice: string;
}

/** A step's price: tokens at the price per 1,000, or one tool call. */
export const tokenCost = (prices: Prices, tokens: number) => ((tokens * Number(prices.agentTokenPrice)) / 1000).toFixed(6);

const eventFields = (r: RunRecord) => ({
  run_uuid: r.id,
  agent: r.agent_name,
  status: r.status,
  reason: r.reason,
});

/** queued → in_progress, with agent.run.started (once). */
export async function beginRun(em: EntityManager, accountId: number, runId: string): Promise<void> {
  await em.transactional(async (tx) => {
    if ((await markStarted(tx, runId)) === 0) return;
    const run = await runRow(tx, runId);
    if (run) await emitEvent(tx, accountId, 'agent.run.started', eventFields(run));
  });
}

/** The run waits for a person (pending set, requires_action) or goes on (pending null). */
export async function waitForDecision(em: EntityManager, accountId: number, runId: string, pending: Record<string, unknown> | null) {
  await em.transactional(async (tx) => {
    const changed = await setWaiting(tx, runId, pending);
    if (changed && pending) {
      const run = await runRow(tx, runId);
      if (run) await emitEvent(tx, accountId, 'agent.run.requires_action', { ...eventFields(run), pending_tool_call: pending });
    }
  });
}

/** Ends the run once, with its event. */
export async function endRun(
  em: EntityManager,
  accountId: number,
  runId: string,
  v: { status: 'completed' | 'failed' | 'cancelled'; output: string | null; reason: RunReason | null; error: string | null },
): Promise<void> {
  await em.transactional(async (tx) => {
    const run = await finishRunRow(tx, runId, v);
    if (run) await emitEvent(tx, accountId, `agent.run.${v.status}`, { ...eventFields(run), output: run.output });
  });
}

export const recordedStep = (em: EntityManager, runId: string, seq: number) => stepOf(em, runId, seq);

/**
 * A model turn recorded once with its usage: tokens added to the run and to the agent's total,
 * their price debited. Answers why the run must stop (the agent's budget spent, the prepaid balance
 * short), judged after this turn's usage is counted.
 */
export async function recordModelTurn(
  em: EntityManager,
  prices: Prices,
  t: {
    accountId: number;
    runId: string;
    profileId: string;
    seq: number;
    model: string;
    usage: { promptTokens: number; completionTokens: number };
    arguments: unknown;
    result: unknown;
    failed: boolean;
  },
): Promise<{ step: StepRecord | null; stop?: 'budget_exhausted' | 'insufficient_balance' }> {
  return em.transactional(async (tx) => {
    const step = await insertStep(tx, {
      run_id: t.runId,
      seq: t.seq,
      kind: 'model',
      name: t.model,
      call_id: null,
      arguments: t.arguments,
      result: t.result,
      status: t.failed ? 'failed' : 'succeeded',
      prompt_tokens: t.usage.promptTokens,
      completion_tokens: t.usage.completionTokens,
      finished: true,
    });
    if (!step) return { step: null };
    const tokens = t.usage.promptTokens + t.usage.completionTokens;
    const cost = tokenCost(prices, tokens);
    await addRunUsage(tx, t.runId, { promptTokens: t.usage.promptTokens, completionTokens: t.usage.completionTokens, toolCalls: 0, cost });
    await addProfileTokens(tx, t.profileId, tokens);
    const paid = Number(cost) <= 0 || (await debitSegments(tx, t.accountId, 1, cost));
    const profile = await profileById(tx, t.accountId, t.profileId);
    if (!paid) return { step, stop: 'insufficient_balance' as const };
    if (profile?.token_budget !== null && profile !== null && Number(profile.tokens_used) >= Number(profile.token_budget))
      return { step, stop: 'budget_exhausted' as const };
    return { step };
  });
}

/** A tool step begun: false when the step exists already (an attempt before this one began it: never call the tool twice). */
export async function beginToolStep(
  em: EntityManager,
  s: { runId: string; seq: number; name: string; callId: string; arguments: unknown },
): Promise<boolean> {
  const step = await insertStep(em, {
    run_id: s.runId,
    seq: s.seq,
    kind: 'tool',
    name: s.name,
    call_id: s.callId,
    arguments: s.arguments,
    result: null,
    status: 'running',
    prompt_tokens: 0,
    completion_tokens: 0,
    finished: false,
  });
  return step !== null;
}

/** A tool step's outcome, with the call's price debited; false when the balance did not cover it. */
export async function finishToolStep(
  em: EntityManager,
  prices: Prices,
  s: { accountId: number; runId: string; seq: number; failed: boolean; result: unknown },
): Promise<boolean> {
  return em.transactional(async (tx) => {
    if ((await finishStep(tx, s.runId, s.seq, s.failed ? 'failed' : 'succeeded', s.result)) === 0) return true;
    const cost = Number(prices.agentToolCallPrice).toFixed(6);
    await addRunUsage(tx, s.runId, { promptTokens: 0, completionTokens: 0, toolCalls: 1, cost });
    return Number(cost) <= 0 || (await debitSegments(tx, s.accountId, 1, cost));
  });
}

/** A tool call that was not made (denied by a person, or outside the grant), recorded as a step. */
export async function recordUncalledTool(
  em: EntityManager,
  s: { runId: string; seq: number; callId: string; name: string; arguments: unknown; result: unknown },
): Promise<void> {
  await insertStep(em, {
    run_id: s.runId,
    seq: s.seq,
    kind: 'tool',
    name: s.name.slice(0, 100),
    call_id: s.callId.slice(0, 100),
    arguments: s.arguments,
    result: s.result,
    status: 'denied',
    prompt_tokens: 0,
    completion_tokens: 0,
    finished: true,
  });
}

/**
 * The credential a run acts with, as it stands now: the submitting key and its issuer, checked at
 * every tool call (a key revoked, expired or whose issuer was deactivated since the run started
 * calls nothing more). A refusal is the model's to read, as the message.
 */
export async function runCredential(
  em: EntityManager,
  accountId: number,
  keyId: number | null,
): Promise<{ ok: true; account: AccountRow; key: KeyRow; user: UserRow | null } | { ok: false; message: string }> {
  if (keyId === null) return { ok: false, message: 'This run has no key to act with.' };
  const [account, key] = await Promise.all([accountForContext(em, accountId), issuedKey(em, accountId, keyId)]);
  if (!account || !key) return { ok: false, message: 'The key that started this run no longer exists.' };
  if (account.status !== 'active') return { ok: false, message: 'This account is suspended.' };
  if (key.revoked_at) return { ok: false, message: 'The key that started this run has been revoked.' };
  if (key.expired) return { ok: false, message: 'The key that started this run has expired.' };
  return {
    ok: true,
    account,
    key: { id: key.id, kind: key.kind, name: key.name, user_id: key.user_id, expires_at: key.expires_at, revoked_at: key.revoked_at },
    user: key.user_id === null ? null : { id: key.user_id, active: key.user_active ?? false, permissions: key.user_permissions ?? [] },
  };
}
