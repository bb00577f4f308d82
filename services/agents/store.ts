import { sql } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import { exec, one } from '../../entities/db.js';
import { tablesOf, type Row } from '../../entities/database.js';

// The agents family's statements: agent_settings, agent_profiles, agent_runs, agent_run_steps. The
// only module that names these tables.

const db = (em: EntityManager) => tablesOf(em, 'agents');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type SettingsRecord = Row<'agents', 'agent_settings'>;
export type ProfileRecord = Row<'agents', 'agent_profiles'>;
export type RunRecord = Row<'agents', 'agent_runs'>;
export type StepRecord = Row<'agents', 'agent_run_steps'>;

// Settings

export const settingsOf = async (em: EntityManager, accountId: number) =>
  (await db(em).selectFrom('agent_settings').selectAll().where('account_id', '=', accountId).executeTakeFirst()) ?? null;

export const upsertSettings = (em: EntityManager, accountId: number, v: { engine_enabled?: boolean; api_enabled?: boolean }) =>
  db(em)
    .insertInto('agent_settings')
    .values({
      account_id: accountId,
      engine_enabled: v.engine_enabled ?? false,
      api_enabled: v.api_enabled ?? false,
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .onConflict((oc) =>
      oc.column('account_id').doUpdateSet({
        ...(v.engine_enabled !== undefined ? { engine_enabled: v.engine_enabled } : {}),
        ...(v.api_enabled !== undefined ? { api_enabled: v.api_enabled } : {}),
        updated_at: sql`now()`,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();

// Profiles

export type ProfileFields = Pick<
  ProfileRecord,
  'name' | 'instructions' | 'model' | 'mcp_servers' | 'tools' | 'preapproved' | 'max_steps' | 'max_seconds' | 'token_budget' | 'api_enabled'
>;

/** Null when the name is taken in the account. */
export const insertProfile = async (em: EntityManager, accountId: number, id: string, v: ProfileFields) =>
  (await db(em)
    .insertInto('agent_profiles')
    .values({
      id,
      account_id: accountId,
      ...v,
      mcp_servers: json(v.mcp_servers),
      tools: json(v.tools),
      preapproved: json(v.preapproved),
      tokens_used: '0',
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doNothing())
    .returningAll()
    .executeTakeFirst()) ?? null;

export const profilesOf = (em: EntityManager, accountId: number) =>
  db(em).selectFrom('agent_profiles').selectAll().where('account_id', '=', accountId).orderBy('name').execute();

export const profileByName = async (em: EntityManager, accountId: number, name: string) =>
  (await db(em).selectFrom('agent_profiles').selectAll().where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst()) ??
  null;

export const profileById = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em).selectFrom('agent_profiles').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()) ??
  null;

export async function updateProfile(em: EntityManager, accountId: number, id: string, v: Partial<ProfileFields>) {
  const set: Record<string, unknown> = { updated_at: sql`now()` };
  for (const [k, value] of Object.entries(v)) {
    if (value === undefined) continue;
    set[k] = ['mcp_servers', 'tools', 'preapproved'].includes(k) ? json(value) : value;
  }
  return (
    (await db(em)
      .updateTable('agent_profiles')
      .set(set)
      .where('account_id', '=', accountId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

export const deleteProfileRow = (em: EntityManager, accountId: number, id: string) =>
  exec(em, 'delete from agent_profiles where account_id = ? and id = ?', [accountId, id]);

/** Adds a turn's tokens to the agent's total (its budget is judged on it). */
export const addProfileTokens = (em: EntityManager, profileId: string, tokens: number) =>
  exec(em, 'update agent_profiles set tokens_used = tokens_used + ? where id = ?', [tokens, profileId]);

// Runs

export type NewRun = Pick<
  RunRecord,
  'id' | 'account_id' | 'profile_id' | 'agent_name' | 'key_id' | 'prompt' | 'idempotency_key' | 'request_hash'
>;

/** Null when the account already has a run with this idempotency key. */
export const insertRun = async (em: EntityManager, r: NewRun) =>
  (await db(em)
    .insertInto('agent_runs')
    .values({ ...r, status: 'queued', created_at: sql`now()` })
    .onConflict((oc) => oc.columns(['account_id', 'idempotency_key']).doNothing())
    .returningAll()
    .executeTakeFirst()) ?? null;

export const runOfKey = async (em: EntityManager, accountId: number, key: string) =>
  (await db(em)
    .selectFrom('agent_runs')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst()) ?? null;

export const runById = async (em: EntityManager, accountId: number, id: string) =>
  (await db(em).selectFrom('agent_runs').selectAll().where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst()) ?? null;

/** A run by its id alone: for the run's own activities, which carry the account beside it. */
export const runRow = async (em: EntityManager, id: string) =>
  (await db(em).selectFrom('agent_runs').selectAll().where('id', '=', id).executeTakeFirst()) ?? null;

/** Runs newest first, of one agent or of the whole account; `before` is a run of the same list. */
export async function runsPage(em: EntityManager, accountId: number, q: { profileId?: string; before?: RunRecord; limit: number }) {
  let s = db(em).selectFrom('agent_runs').selectAll().where('account_id', '=', accountId);
  if (q.profileId) s = s.where('profile_id', '=', q.profileId);
  if (q.before) {
    const b = q.before;
    s = s.where((eb) => eb.or([eb('created_at', '<', b.created_at), eb.and([eb('created_at', '=', b.created_at), eb('id', '<', b.id)])]));
  }
  return s.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
}

export const stepsOf = (em: EntityManager, runIds: string[]) =>
  runIds.length === 0
    ? Promise.resolve([] as StepRecord[])
    : db(em).selectFrom('agent_run_steps').selectAll().where('run_id', 'in', runIds).orderBy('run_id').orderBy('seq').execute();

/** queued → in_progress, once (a retried activity changes nothing). */
export const markStarted = (em: EntityManager, id: string) =>
  exec(em, `update agent_runs set status = 'in_progress', started_at = coalesce(started_at, now()) where id = ? and status = 'queued'`, [
    id,
  ]);

/** in_progress ↔ requires_action, with the pending call; never out of a terminal status. */
export const setWaiting = (em: EntityManager, id: string, pending: Record<string, unknown> | null) =>
  exec(em, `update agent_runs set status = ?, pending = ? where id = ? and status not in ('completed', 'failed', 'cancelled')`, [
    pending ? 'requires_action' : 'in_progress',
    pending ? JSON.stringify(pending) : null,
    id,
  ]);

/** Ends the run once: a second finish (a retried activity) returns null. */
export const finishRunRow = async (
  em: EntityManager,
  id: string,
  v: { status: 'completed' | 'failed' | 'cancelled'; output: string | null; reason: string | null; error: string | null },
) =>
  one<RunRecord>(
    em,
    `update agent_runs set status = ?, output = ?, reason = ?, error = ?, pending = null, finished_at = now()
      where id = ? and status not in ('completed', 'failed', 'cancelled') returning *`,
    [v.status, v.output, v.reason, v.error, id],
  );

/** A step recorded once: null when (run, seq) is already there (the activity ran before). */
export const insertStep = (
  em: EntityManager,
  s: Pick<StepRecord, 'run_id' | 'seq' | 'kind' | 'name' | 'call_id' | 'status' | 'prompt_tokens' | 'completion_tokens'> & {
    arguments: unknown;
    result: unknown;
    finished: boolean;
  },
) =>
  one<StepRecord>(
    em,
    `insert into agent_run_steps (run_id, seq, kind, name, call_id, arguments, result, status, prompt_tokens, completion_tokens, started_at, finished_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, now(), ${s.finished ? 'now()' : 'null'})
     on conflict (run_id, seq) do nothing returning *`,
    [
      s.run_id,
      s.seq,
      s.kind,
      s.name,
      s.call_id,
      s.arguments === undefined ? null : JSON.stringify(s.arguments),
      s.result === undefined ? null : JSON.stringify(s.result),
      s.status,
      s.prompt_tokens,
      s.completion_tokens,
    ],
  );

export const stepOf = (em: EntityManager, runId: string, seq: number) =>
  one<StepRecord>(em, 'select * from agent_run_steps where run_id = ? and seq = ?', [runId, seq]);

export const finishStep = (em: EntityManager, runId: string, seq: number, status: 'succeeded' | 'failed' | 'denied', result: unknown) =>
  exec(em, `update agent_run_steps set status = ?, result = ?, finished_at = now() where run_id = ? and seq = ? and status = 'running'`, [
    status,
    JSON.stringify(result ?? null),
    runId,
    seq,
  ]);

/** Adds a step's usage and cost to its run. */
export const addRunUsage = (
  em: EntityManager,
  id: string,
  u: { promptTokens: number; completionTokens: number; toolCalls: number; cost: string },
) =>
  exec(
    em,
    `update agent_runs set prompt_tokens = prompt_tokens + ?, completion_tokens = completion_tokens + ?, tool_calls = tool_calls + ?, cost = cost + ?::numeric where id = ?`,
    [u.promptTokens, u.completionTokens, u.toolCalls, u.cost, id],
  );

/** Queued runs older than `olderThanMs` whose workflow may never have started (a crash between the insert and the start). */
export const staleQueuedRuns = (em: EntityManager, olderThanMs: number, limit: number) =>
  db(em)
    .selectFrom('agent_runs')
    .select(['id', 'account_id'])
    .where('status', '=', 'queued')
    .where('created_at', '<', sql<string>`now() - make_interval(secs => ${olderThanMs / 1000})`)
    .limit(limit)
    .execute();
