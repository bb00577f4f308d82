import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { ApplicationFailure } from '@temporalio/common';
import { WorkflowFailedError } from '@temporalio/client';
import { Worker, type WorkflowBundle } from '@temporalio/worker';
import type { ChatGroupActivities } from '../../../activities/groups/chat-group.js';
import {
  chatGroupQuery,
  groupConfirmedSignal,
  type chatGroupChangeWorkflow,
  type chatGroupWorkflow,
  type ChatGroupState,
} from '../../../workflows/groups/chat-group.js';
import { timeSkippingEnv, freshTaskQueue } from '../../support/workflow-env.js';

// The chat-group creation workflow on the time-skipping server: the provider's request, the wait for
// its lifecycle webhook (a signal) bounded by the confirmation time, then active and the initial
// invitations, or failed with the reason. The activity doubles keep the group's status with the
// same guard as the SQL (creating → one other status, once).
let env: TestWorkflowEnvironment;
let bundle: WorkflowBundle;

before(async () => {
  ({ env, bundle } = await timeSkippingEnv('index.ts'));
});
after(async () => {
  await env?.teardown();
});

type Acts = ChatGroupActivities;

function groupDouble(create: Acts['requestGroupCreation'] = async () => ({ ok: true, requestId: 'req-1' })) {
  const g = { status: 'creating', reason: null as string | null, providerGroupId: null as string | null, calls: [] as string[] };
  const activities: Partial<Acts> = {
    requestGroupCreation: async (a) => {
      g.calls.push('request');
      return create(a);
    },
    async activateGroup(a) {
      g.calls.push('activate');
      if (g.status !== 'creating') return false;
      g.status = 'active';
      g.providerGroupId = a.providerGroupId;
      return true;
    },
    async failGroup(a) {
      g.calls.push('fail');
      if (g.status !== 'creating') return false;
      g.status = 'failed';
      g.reason = a.reason;
      return true;
    },
    async sendInitialInvitations() {
      g.calls.push('invite');
      return { sent: 2, failed: 1 };
    },
  };
  return { g, activities };
}

async function run<T>(activities: Partial<Acts>, fn: (taskQueue: string) => Promise<T>) {
  const taskQueue = freshTaskQueue('chat-group');
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
  return worker.runUntil(fn(taskQueue));
}

const start = (taskQueue: string, confirmationSeconds = 300) =>
  env.client.workflow.start<typeof chatGroupWorkflow>('chatGroupWorkflow', {
    taskQueue,
    workflowId: `chat-group-${Math.random()}`,
    args: [{ accountId: 1, groupId: 7, confirmationSeconds }],
  });

test('the confirmation webhook (signal) makes the group active, then the initial invitees are invited', { timeout: 60_000 }, async () => {
  const d = groupDouble();
  const state = await run(d.activities, async (q) => {
    const h = await start(q);
    const waiting = await h.query(chatGroupQuery);
    assert.equal(waiting.groupId, 7);
    await env.sleep(30_000);
    const stillWaiting = await h.query(chatGroupQuery);
    assert.equal(stillWaiting.phase, 'waiting');
    assert.equal(stillWaiting.requestId, 'req-1');
    await h.signal(groupConfirmedSignal, { ok: true, providerGroupId: 'G-1', inviteLink: 'https://chat.whatsapp.com/abc' });
    // A redelivered webhook changes nothing.
    await h.signal(groupConfirmedSignal, { ok: false, reason: 'late noise' }).catch(() => undefined);
    return h.result();
  });
  assert.equal(state.phase, 'active');
  assert.equal(state.providerGroupId, 'G-1');
  assert.equal(state.inviteLink, 'https://chat.whatsapp.com/abc');
  assert.deepEqual(state.invitations, { sent: 2, failed: 1 });
  assert.deepEqual(d.g.calls, ['request', 'activate', 'invite']);
  assert.equal(d.g.status, 'active');
});

test('a refusal of the create call (131215) fails the group at once with the reason', { timeout: 60_000 }, async () => {
  const d = groupDouble(async () => ({ ok: false, reason: 'not eligible for groups (131215)' }));
  const state = await run(d.activities, async (q) => (await start(q)).result());
  assert.equal(state.phase, 'failed');
  assert.equal(state.failureReason, 'not eligible for groups (131215)');
  assert.deepEqual(d.g.calls, ['request', 'fail']);
  assert.equal(d.g.reason, 'not eligible for groups (131215)');
});

test('a failure webhook fails the group with the provider’s words; nobody is invited', { timeout: 60_000 }, async () => {
  const d = groupDouble();
  const state = await run(d.activities, async (q) => {
    const h = await start(q);
    await h.signal(groupConfirmedSignal, { ok: false, reason: 'Group creation limit reached (131211)' });
    return h.result();
  });
  assert.equal(state.phase, 'failed');
  assert.equal(d.g.reason, 'Group creation limit reached (131211)');
  assert.deepEqual(d.g.calls, ['request', 'fail']);
});

test(
  'no confirmation within the confirmation time: failed with that reason, and a late one cannot revive it',
  { timeout: 60_000 },
  async () => {
    const d = groupDouble();
    let failedAt = 0;
    let begun = 0;
    const activities = {
      ...d.activities,
      async failGroup(a: { accountId: number; groupId: number; reason: string }) {
        failedAt = await env.currentTimeMs();
        return d.activities.failGroup!(a);
      },
    };
    const { state, late } = await run(activities, async (q) => {
      // Read once the worker runs: the test server may skip time while a worker starts on a loaded machine.
      begun = await env.currentTimeMs();
      const h = await start(q, 300);
      const s: ChatGroupState = await h.result();
      const lateSignal = await h
        .signal(groupConfirmedSignal, { ok: true, providerGroupId: 'G-late', inviteLink: null })
        .then(() => 'delivered')
        .catch((e: Error) => e.name);
      return { state: s, late: lateSignal };
    });
    assert.equal(state.phase, 'failed');
    assert.match(state.failureReason!, /did not confirm the group within 300 seconds/);
    const after = (failedAt - begun) / 1000;
    assert.ok(after >= 300 && after < 330, `failed after ${after} s`);
    assert.notEqual(late, 'delivered', 'the closed workflow takes no signal');
    assert.equal(d.g.status, 'failed');
    assert.equal(d.g.providerGroupId, null);
  },
);

test('an unreachable provider is retried; the group waits in creating meanwhile', { timeout: 60_000 }, async () => {
  let attempts = 0;
  const d = groupDouble(async () => {
    attempts++;
    if (attempts < 3) throw ApplicationFailure.retryable('connection refused', 'ProviderTransient');
    return { ok: true, requestId: 'req-3' };
  });
  const state = await run(d.activities, async (q) => {
    const h = await start(q);
    await env.sleep(20_000);
    await h.signal(groupConfirmedSignal, { ok: true, providerGroupId: 'G-3', inviteLink: 'https://chat.whatsapp.com/x' });
    return h.result();
  });
  assert.equal(attempts, 3);
  assert.equal(state.phase, 'active');
  assert.equal(state.requestId, 'req-3');
});

test('a deletion the provider refuses fails the change workflow and puts the group back', { timeout: 60_000 }, async () => {
  const abandoned: string[] = [];
  const activities: Partial<Acts> = {
    async changeGroupAtProvider() {
      throw ApplicationFailure.nonRetryable('Group is suspended (131207)', 'ProviderRefused');
    },
    async abandonGroupDelete(a) {
      abandoned.push(a.previousStatus);
    },
  };
  const err = await run(activities, async (q) => {
    const h = await env.client.workflow.start<typeof chatGroupChangeWorkflow>('chatGroupChangeWorkflow', {
      taskQueue: q,
      workflowId: `chat-group-change-${Math.random()}`,
      args: [{ accountId: 1, groupId: 7, change: { kind: 'delete', previousStatus: 'active' } }],
    });
    return h.result().then(
      () => null,
      (e: unknown) => e,
    );
  });
  assert.ok(err instanceof WorkflowFailedError);
  assert.deepEqual(abandoned, ['active']);
});

// The member and pin calls are change kinds of their own: each schedules its own activity (the
// update and delete kinds keep changeGroupAtProvider, their recorded histories replay unchanged).
const startChange = (taskQueue: string, change: Parameters<typeof chatGroupChangeWorkflow>[0]['change']) =>
  env.client.workflow.start<typeof chatGroupChangeWorkflow>('chatGroupChangeWorkflow', {
    taskQueue,
    workflowId: `chat-group-change-${Math.random()}`,
    args: [{ accountId: 1, groupId: 7, change }],
  });

test('an invite-link reset runs its own activity; an outage is retried until the provider answers', { timeout: 60_000 }, async () => {
  let attempts = 0;
  const calls: string[] = [];
  const activities: Partial<Acts> = {
    async resetGroupInviteLink(a) {
      calls.push(`reset:${a.change.kind}`);
      if (++attempts < 3) throw ApplicationFailure.retryable('HTTP 500', 'ProviderTransient');
      return { kind: 'invite_link_reset', inviteLink: 'https://chat.whatsapp.com/new', status: 'active' };
    },
    async changeGroupAtProvider() {
      calls.push('change');
      return { status: 'active' };
    },
  };
  const result = await run(activities, async (q) => (await startChange(q, { kind: 'invite_link_reset' })).result());
  assert.deepEqual(result, { kind: 'invite_link_reset', inviteLink: 'https://chat.whatsapp.com/new', status: 'active' });
  assert.equal(attempts, 3);
  assert.deepEqual(calls, ['reset:invite_link_reset', 'reset:invite_link_reset', 'reset:invite_link_reset']);
});

test('each member kind reaches its activity with its items and answers its per-item result', { timeout: 60_000 }, async () => {
  const seen: string[] = [];
  const activities: Partial<Acts> = {
    async decideGroupJoinRequests(a) {
      seen.push(`${a.change.decision}:${a.change.joinRequestIds.join(',')}`);
      return { kind: 'join_requests', done: ['jr1'], failed: [{ id: 'jr2', code: '131213', message: 'gone' }], status: 'active' };
    },
    async removeGroupParticipants(a) {
      seen.push(`remove:${a.change.members.join(',')}|${a.change.invitations.join(',')}`);
      return { kind: 'participants_removal', removed: a.change.members, withdrawn: a.change.invitations, failed: [], status: 'active' };
    },
    async pinGroupMessageAtProvider(a) {
      seen.push(`pin:${a.change.messageId}:${a.change.expirationDays}`);
      return { kind: 'pin', status: 'active' };
    },
  };
  const results = await run(activities, async (q) => [
    await (await startChange(q, { kind: 'join_requests', decision: 'reject', joinRequestIds: ['jr1', 'jr2'] })).result(),
    await (await startChange(q, { kind: 'participants_removal', members: ['255700'], invitations: ['255711'] })).result(),
    await (await startChange(q, { kind: 'pin', pin: true, messageId: 'wamid.1', expirationDays: 7 })).result(),
  ]);
  assert.deepEqual(seen, ['reject:jr1,jr2', 'remove:255700|255711', 'pin:wamid.1:7']);
  assert.deepEqual(results[0], {
    kind: 'join_requests',
    done: ['jr1'],
    failed: [{ id: 'jr2', code: '131213', message: 'gone' }],
    status: 'active',
  });
  assert.deepEqual(results[1], { kind: 'participants_removal', removed: ['255700'], withdrawn: ['255711'], failed: [], status: 'active' });
  assert.deepEqual(results[2], { kind: 'pin', status: 'active' });
});

test(
  'a member change the provider refuses fails the workflow at once with ProviderRefused; no deletion is abandoned',
  { timeout: 60_000 },
  async () => {
    let attempts = 0;
    const abandoned: string[] = [];
    const activities: Partial<Acts> = {
      async removeGroupParticipants() {
        attempts++;
        throw ApplicationFailure.nonRetryable('Group is suspended (131207)', 'ProviderRefused', {
          code: '131207',
          message: 'Group is suspended',
        });
      },
      async abandonGroupDelete(a) {
        abandoned.push(a.previousStatus);
      },
    };
    const err = await run(activities, async (q) =>
      (await startChange(q, { kind: 'participants_removal', members: ['255700'], invitations: [] })).result().then(
        () => null,
        (e: unknown) => e,
      ),
    );
    assert.ok(err instanceof WorkflowFailedError);
    const cause = (err.cause as Error & { cause?: unknown }).cause;
    assert.ok(cause instanceof ApplicationFailure, String(cause));
    assert.equal(cause.type, 'ProviderRefused');
    assert.deepEqual(cause.details, [{ code: '131207', message: 'Group is suspended' }]);
    assert.equal(attempts, 1);
    assert.deepEqual(abandoned, []);
  },
);
