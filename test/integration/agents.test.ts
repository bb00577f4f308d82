import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { API_URL, admin, api, eventually, http, newTenant, type Tenant } from '../support/stack.js';
import { closeTemporal, temporal } from '../support/webhooks.js';

// Agent runs over /api/engine (docs/agents.md) against the simulator's scripted model
// (simulator/model.ts): a whole run with tool calls and an approval, a denial by the operator, a
// cancellation, refusals, idempotency, auth, tenancy, bad input, and model garbage.

after(closeTemporal);

const ENGINE = '/api/engine';
const engine = (t: Tenant | string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
  http(method, `${ENGINE}${path}`, { token: typeof t === 'string' ? t : t.token, body, headers });
const submit = (t: Tenant, agent: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  engine(t, 'POST', `/agents/${agent}/runs`, body, headers);
const read = (t: Tenant, run: string) => engine(t, 'GET', `/runs/${run}`);
const TERMINAL = ['completed', 'failed', 'cancelled'];
const until = (t: Tenant, run: string, ok: (r: any) => boolean, what: string) =>
  eventually(
    () => read(t, run),
    (r) => r.status === 200 && ok(r.body),
    45_000,
    300,
    what,
  );
const settled = (t: Tenant, run: string) => until(t, run, (b) => TERMINAL.includes(b.status), `run ${run} settled`);

/** A tenant whose engine is on and available over the API, with an agent on the account and contacts servers. */
async function agentTenant(profile: Record<string, unknown> = {}, opts: { permissions?: string[] } = {}) {
  const t = await newTenant(opts);
  assert.equal((await admin('PUT', `/accounts/${t.accountId}/agent-engine`, { engine_enabled: true, api_enabled: true })).status, 200);
  const created = await admin('POST', `/accounts/${t.accountId}/agents`, {
    name: 'helper',
    instructions: 'You help the business with its account.',
    mcp_servers: ['account', 'contacts'],
    max_steps: 12,
    max_seconds: 120,
    ...profile,
  });
  assert.equal(created.status, 201, created.text);
  return t;
}

test(
  'a whole run: tool calls through the simulated model, an approval, usage debited, events, workflow id and state',
  { timeout: 120_000 },
  async () => {
    const t = await agentTenant();
    const before = Number((await api('GET', '/api/v3/balance', t.token)).body.data.balance ?? NaN);
    const phone = `2557${String(Date.now()).slice(-8)}`;
    const prompt = [
      'CALL get_profile {}',
      `CALL create_contact_group {"name":"Agent ${phone}"}`,
      'CALL get_balance {}',
      'ANSWER done after {{tools}} tools',
    ].join('\n');
    const key = `run-${Date.now()}`;
    const r = await submit(t, 'helper', { prompt }, { 'Idempotency-Key': key });
    assert.equal(r.status, 202, r.text);
    const run = r.body.run_uuid as string;
    assert.match(run, /^[0-9a-f-]{36}$/);
    assert.equal(r.body.terminal, false);

    // create_contact_group has the mcp:write elevation, which the agent does not pre-approve: the run waits.
    const waiting = await until(t, run, (b) => b.status === 'requires_action', 'the run waits for approval');
    const pending = waiting.body.pending_tool_call;
    assert.equal(pending.tool, 'create_contact_group');
    assert.equal(pending.elevation, 'mcp:write');
    assert.deepEqual(pending.arguments, { name: `Agent ${phone}` });
    assert.deepEqual(
      waiting.body.steps.map((s: any) => [s.kind, s.name === 'get_profile' ? s.name : s.kind, s.status]),
      [
        ['model', 'model', 'succeeded'],
        ['tool', 'get_profile', 'succeeded'],
        ['model', 'model', 'succeeded'],
      ],
    );
    assert.equal(waiting.body.steps[1].result.id, t.accountId, 'the tool result is the operation’s answer');

    // The workflow: readable id, the account's search attributes, its state as a query.
    const client = await temporal();
    const handle = client.workflow.getHandle(`agent-run/${t.accountId}/${run}`);
    const described = await handle.describe();
    assert.equal(described.typedSearchAttributes.getAll().find((p) => p.key.name === 'AccountId')?.value, String(t.accountId));
    assert.equal(described.typedSearchAttributes.getAll().find((p) => p.key.name === 'ResourceType')?.value, 'agent_run');
    const state = await handle.query<{ status: string; pending: { tool: string } }>('state');
    assert.deepEqual([state.status, state.pending.tool], ['requires_action', 'create_contact_group']);

    // A decision on another call id is a conflict; the right one goes through.
    assert.equal((await engine(t, 'POST', `/runs/${run}/approval`, { call_id: 'nope', decision: 'approve' })).status, 409);
    const approved = await engine(t, 'POST', `/runs/${run}/approval`, { call_id: pending.call_id, decision: 'approve' });
    assert.equal(approved.status, 200, approved.text);

    const done = await settled(t, run);
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal(done.body.output, 'done after 3 tools');
    assert.equal(done.body.terminal, true);
    assert.deepEqual(
      done.body.steps.map((s: any) => (s.kind === 'tool' ? s.name : 'model')),
      ['model', 'get_profile', 'model', 'create_contact_group', 'model', 'get_balance', 'model'],
    );
    const contactStep = done.body.steps[3];
    assert.equal(contactStep.status, 'succeeded', JSON.stringify(contactStep));
    assert.equal(contactStep.result.name, `Agent ${phone}`);
    const groups = await api('GET', '/api/v3/contact-groups', t.token);
    assert.ok(JSON.stringify(groups.body).includes(`Agent ${phone}`), 'the approved call made the group');
    assert.equal(done.body.usage.tool_calls, 3);
    assert.ok(done.body.usage.total_tokens > 0);
    assert.ok(Number(done.body.usage.cost) > 0);
    assert.ok(done.body.started_at && done.body.finished_at);
    // Debited from the wallet like sends.
    const afterBalance = Number((await api('GET', '/api/v3/balance', t.token)).body.data.balance ?? NaN);
    if (Number.isFinite(before)) assert.ok(afterBalance < before, `balance ${before} → ${afterBalance}`);

    // agent.run.* through the outbox.
    const events = await eventually(
      () => admin('GET', `/accounts/${t.accountId}/events`),
      (e) => JSON.stringify(e.body).includes('agent.run.completed'),
      20_000,
      300,
      'agent.run.completed in the outbox',
    );
    const kinds = JSON.stringify(events.body);
    for (const k of ['agent.run.started', 'agent.run.requires_action', 'agent.run.completed']) assert.ok(kinds.includes(k), k);

    // Idempotency-Key: the same request replays the run; another request with the key is a 422; per account.
    const replay = await submit(t, 'helper', { prompt }, { 'Idempotency-Key': key });
    assert.equal(replay.status, 200, 'a replay of a settled run answers it settled');
    assert.equal(replay.body.run_uuid, run);
    assert.equal(replay.body.replayed, true);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    const quoted = await submit(t, 'helper', { prompt }, { 'Idempotency-Key': `"${key}"` });
    assert.equal(quoted.body.run_uuid, run, 'the sf-string form of the key is the same key');
    const other = await submit(t, 'helper', { prompt: 'ANSWER something else' }, { 'Idempotency-Key': key });
    assert.equal(other.status, 422);
    assert.equal(other.body.code, 'idempotency_key_reused');
    assert.match(other.headers.get('content-type') ?? '', /application\/problem\+json/);
    const u = await agentTenant();
    const theirs = await submit(u, 'helper', { prompt }, { 'Idempotency-Key': key });
    assert.equal(theirs.status, 202);
    assert.notEqual(theirs.body.run_uuid, run, 'the same key in another account makes another run');
    for (const bad of ['"unterminated', 'x'.repeat(256), 'tab\there', 'bare"quote']) {
      const res = await submit(t, 'helper', { prompt: 'ANSWER k' }, { 'Idempotency-Key': bad });
      assert.equal(res.status, 400, `key ${JSON.stringify(bad)}: ${res.text}`);
      assert.equal(res.body.code, 'invalid_idempotency_key');
    }

    // Tenancy: another account can neither read the run, nor decide on it, nor run this account's agent.
    assert.equal((await read(u, run)).status, 404);
    assert.equal((await engine(u, 'POST', `/runs/${run}/cancel`)).status, 404);
    assert.equal((await engine(u, 'POST', `/runs/${run}/approval`, { call_id: pending.call_id, decision: 'approve' })).status, 404);
    // An agent is named within its account: an account without one named helper cannot reach ours.
    const stranger = await newTenant();
    assert.equal((await submit(stranger, 'helper', { prompt: 'ANSWER x' })).status, 404);
    assert.equal(
      (await admin('POST', `/accounts/${u.accountId}/agent-runs/${run}/cancel`)).status,
      404,
      "the operator path names the run's account",
    );
    const list = await engine(t, 'GET', '/agents/helper/runs?limit=50');
    assert.equal(list.status, 200);
    assert.ok(list.body.runs.some((x: any) => x.run_uuid === run));
    assert.ok(!(await engine(u, 'GET', '/agents/helper/runs?limit=50')).body.runs.some((x: any) => x.run_uuid === run));
  },
);

test(
  'the operator denies a call (the run goes on), a run is cancelled while it waits, wait_seconds answers 200',
  { timeout: 120_000 },
  async () => {
    const t = await agentTenant();
    const phone = `2557${String(Date.now()).slice(-8)}`;
    const denied = (await submit(t, 'helper', { prompt: `CALL create_contact_group {"name":"D ${phone}"}\nANSWER after {{last}}` })).body
      .run_uuid;
    const waiting = await until(t, denied, (b) => b.status === 'requires_action', 'waits');
    const d = await admin('POST', `/accounts/${t.accountId}/agent-runs/${denied}/approval`, {
      call_id: waiting.body.pending_tool_call.call_id,
      decision: 'deny',
      note: 'not today',
    });
    assert.equal(d.status, 200, d.text);
    const done = await settled(t, denied);
    assert.equal(done.body.status, 'completed');
    const step = done.body.steps.find((s: any) => s.kind === 'tool');
    assert.deepEqual([step.name, step.status, step.result.denied_by], ['create_contact_group', 'denied', 'operator']);
    assert.match(done.body.output, /not today/);
    assert.equal(done.body.usage.tool_calls, 0, 'a denied call is not made');

    const cancelled = (await submit(t, 'helper', { prompt: `CALL create_contact_group {"name":"C ${phone}"}\nANSWER never` })).body
      .run_uuid;
    await until(t, cancelled, (b) => b.status === 'requires_action', 'waits');
    const c = await engine(t, 'POST', `/runs/${cancelled}/cancel`);
    assert.equal(c.status, 202);
    const end = await settled(t, cancelled);
    assert.deepEqual([end.body.status, end.body.reason, end.body.pending_tool_call], ['cancelled', 'cancelled', null]);
    assert.equal((await engine(t, 'POST', `/runs/${cancelled}/cancel`)).status, 409, 'an ended run cannot be cancelled');

    const quick = await submit(t, 'helper', { prompt: 'ANSWER right away', wait_seconds: 10 });
    assert.equal(quick.status, 200, quick.text);
    assert.deepEqual([quick.body.status, quick.body.output, quick.body.terminal], ['completed', 'right away', true]);

    // The model's 429 and 500 are retried by the turn's activity; the run completes.
    const flaky = await submit(t, 'helper', { prompt: 'FAULT 429 2\nCALL get_profile {}\nFAULT 500 1\nANSWER survived', wait_seconds: 0 });
    const ok = await settled(t, flaky.body.run_uuid);
    assert.deepEqual([ok.body.status, ok.body.output], ['completed', 'survived']);
  },
);

test(
  'model garbage, malformed arguments and tools outside the grant fail the run with a reason; nothing outside the grant is called',
  { timeout: 120_000 },
  async () => {
    // No contacts.view: list_contacts is not offered, whatever the agent's servers say.
    const t = await agentTenant({}, { permissions: ['contacts.create'] });
    const cases: [string, string][] = [
      ['GARBAGE', 'model_output_invalid'],
      ['MALFORMED get_profile', 'model_output_invalid'],
      ['CALL send_sms {"recipient":"+255700000001","message":"hi"}', 'tool_not_granted'],
      ['CALL list_contacts {}', 'tool_not_granted'],
      ['CALL admin_list_agents {"account":"1"}', 'tool_not_granted'],
    ];
    for (const [prompt, reason] of cases) {
      const run = (await submit(t, 'helper', { prompt })).body.run_uuid;
      const end = await settled(t, run);
      assert.deepEqual([end.body.status, end.body.reason], ['failed', reason], `${prompt}: ${JSON.stringify(end.body)}`);
      assert.ok(end.body.error);
      const tools = end.body.steps.filter((s: any) => s.kind === 'tool');
      assert.ok(
        tools.every((s: any) => s.status === 'denied'),
        `${prompt}: no tool outside the grant was called (${JSON.stringify(tools)})`,
      );
      assert.equal(end.body.usage.tool_calls, 0);
    }

    // The step limit.
    await admin('PATCH', `/accounts/${t.accountId}/agents/helper`, { max_steps: 2 });
    const long = (await submit(t, 'helper', { prompt: 'CALL get_profile {}\nCALL get_profile {}\nANSWER x' })).body.run_uuid;
    assert.deepEqual([(await settled(t, long)).body.status, (await read(t, long)).body.reason], ['failed', 'step_limit']);
  },
);

test(
  'refusals: engine off, API off, agent not runnable, budget spent, empty wallet, auth, suspended account, bad input',
  { timeout: 120_000 },
  async () => {
    const t = await agentTenant();
    const engineOf = (v: Record<string, boolean>) => admin('PUT', `/accounts/${t.accountId}/agent-engine`, v);
    const refusal = async (expect: number, code: string, body: Record<string, unknown> = { prompt: 'ANSWER hi' }) => {
      const r = await submit(t, 'helper', body);
      assert.equal(r.status, expect, r.text);
      assert.equal(r.body.code, code, r.text);
      assert.equal(r.body.status, expect, 'problem details carry the status');
      assert.match(r.headers.get('content-type') ?? '', /problem\+json/);
    };
    await engineOf({ engine_enabled: false });
    await refusal(403, 'engine_disabled');
    await engineOf({ engine_enabled: true, api_enabled: false });
    await refusal(403, 'api_unavailable');
    await engineOf({ api_enabled: true });
    await admin('PATCH', `/accounts/${t.accountId}/agents/helper`, { api_enabled: false });
    await refusal(403, 'agent_not_runnable');
    await admin('PATCH', `/accounts/${t.accountId}/agents/helper`, { api_enabled: true, token_budget: 1 });
    const spent = (await submit(t, 'helper', { prompt: 'CALL get_profile {}\nANSWER x' })).body.run_uuid;
    assert.deepEqual([(await settled(t, spent)).body.status, (await read(t, spent)).body.reason], ['failed', 'budget_exhausted']);
    await refusal(402, 'budget_exhausted');
    await admin('PATCH', `/accounts/${t.accountId}/agents/helper`, { token_budget: null });

    // Bad input: never a 500.
    await refusal(422, 'invalid_request', { prompt: '' });
    await refusal(422, 'invalid_request', { prompt: '   ' });
    await refusal(422, 'invalid_request', { prompt: 'x'.repeat(32_001) });
    await refusal(422, 'invalid_request', { prompt: 'ANSWER a', wait_seconds: 99 });
    await refusal(422, 'invalid_request', { prompt: 'ANSWER a', extra: 1 });
    assert.equal((await submit(t, 'nobody', { prompt: 'ANSWER a' })).status, 404);
    assert.equal((await read(t, '00000000-0000-4000-8000-000000000000')).status, 404);
    assert.equal((await read(t, 'not-a-uuid')).status, 404);
    const raw = await http('POST', `${ENGINE}/agents/helper/runs`, {
      token: t.token,
      raw: '{"prompt":',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(raw.status, 400);
    assert.equal((await engine(t, 'GET', '/agents/helper/runs?limit=0')).status, 422);
    assert.equal((await engine(t, 'GET', '/agents/helper/runs?before=zzz')).status, 422);

    // Auth: the REST key only, from the header only.
    const unauth = async (token: string | null, path = `/runs/00000000-0000-4000-8000-000000000000`) => {
      const r = await http('GET', `${ENGINE}${path}`, { token });
      assert.equal(r.status, 401, `${token}: ${r.text}`);
      assert.equal(r.body.code, 'unauthenticated');
    };
    await unauth(null);
    await unauth('bogus-key');
    const mcp = (await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId })).body.data;
    await unauth(mcp.token);
    await unauth(null, `/runs/00000000-0000-4000-8000-000000000000?api_key=${t.token}`);
    const revoked = (await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'to revoke', user_id: t.userId })).body.data;
    await admin('DELETE', `/accounts/${t.accountId}/keys/${revoked.id}`);
    await unauth(revoked.token);
    const expired = (
      await admin('POST', `/accounts/${t.accountId}/keys`, {
        name: 'expired',
        user_id: t.userId,
        expires_at: new Date(Date.now() - 1000).toISOString(),
      })
    ).body.data;
    await unauth(expired.token);
    assert.equal((await engine(t.legacyToken, 'GET', '/agents/helper/runs')).status, 403, 'a key with no issuer is refused');
    await admin('PATCH', `/accounts/${t.accountId}`, { status: 'suspended' });
    const suspended = await engine(t, 'GET', '/agents/helper/runs');
    assert.equal(suspended.status, 403);
    assert.equal(suspended.body.code, 'account_suspended');
    await admin('PATCH', `/accounts/${t.accountId}`, { status: 'active' });

    // The engine's own throttle: its requests are not counted in the v3 window.
    const v3 = async () => Number((await api('GET', '/api/v3/balance', t.token)).headers.get('x-ratelimit-remaining'));
    const first = await v3();
    for (let i = 0; i < 3; i++) await engine(t, 'GET', '/agents/helper/runs');
    assert.equal(await v3(), first - 1);

    // An empty prepaid wallet is refused before the run starts.
    const poor = await admin('POST', '/accounts', { name: `Poor ${Date.now()}`, wallet_balance: 0, currency: 'USD' });
    const pid = poor.body.data.id;
    const user = await admin('POST', `/accounts/${pid}/users`, { email: `poor${Date.now()}@example.com`, name: 'P', permissions: ['*'] });
    const key = (await admin('POST', `/accounts/${pid}/keys`, { name: 'k', user_id: user.body.data.id })).body.data.token;
    await admin('PUT', `/accounts/${pid}/agent-engine`, { engine_enabled: true, api_enabled: true });
    await admin('POST', `/accounts/${pid}/agents`, { name: 'helper', instructions: 'x', mcp_servers: ['account'] });
    const broke = await http('POST', `${ENGINE}/agents/helper/runs`, { token: key, body: { prompt: 'ANSWER a' } });
    assert.equal(broke.status, 402, broke.text);
    assert.equal(broke.body.code, 'insufficient_balance');

    // The operator's side: settings, profiles and their own refusals.
    assert.equal(
      (await admin('POST', `/accounts/${t.accountId}/agents`, { name: 'helper', instructions: 'x', mcp_servers: ['account'] })).status,
      409,
    );
    assert.equal(
      (await admin('POST', `/accounts/${t.accountId}/agents`, { name: 'Bad Name', instructions: 'x', mcp_servers: ['account'] })).status,
      422,
    );
    assert.equal(
      (await admin('POST', `/accounts/${t.accountId}/agents`, { name: 'x', instructions: 'x', mcp_servers: ['nope'] })).status,
      422,
    );
    const engineSettings = await admin('GET', `/accounts/${t.accountId}/agent-engine`);
    assert.deepEqual([engineSettings.body.data.engine_enabled, engineSettings.body.data.api_enabled], [true, true]);
    assert.ok((await admin('GET', `/accounts/${t.accountId}/agent-runs`)).body.data.runs.length > 0);
    assert.ok(API_URL);
  },
);
