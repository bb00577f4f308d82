import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@temporalio/client';
import { executeUpdateWithStart, scheduleAction, startWorkflow } from '../../temporal/starters.js';
import { AccountId, ResourceId, ResourceType } from '../../temporal/search-attributes.js';
import { messageStarter, messageWithOutcomeStarter } from '../../workflows/messaging/message.starter.js';
import { outboundDispatcherStarter } from '../../workflows/messaging/outbound-dispatcher.starter.js';
import { campaignResumeStarter, campaignStarter } from '../../workflows/campaigns/campaign.starter.js';
import { contactImportStarter } from '../../workflows/contacts/contact-import.starter.js';
import { webhookDeliveryStarter } from '../../workflows/webhooks/webhook-delivery.starter.js';
import { operationRunStarter, scheduledOperationRunStarter } from '../../workflows/automations/operation-run.starter.js';
import type { MessageWorkflowInput } from '../../workflows/messaging/message.js';
import type { CampaignWorkflowInput } from '../../workflows/campaigns/campaign.js';
import type { DispatcherInput } from '../../workflows/messaging/outbound-dispatcher.js';

// Each starter must start its workflow exactly as the hand-built start it replaced: same type, id,
// task queue, id policies, search attributes and memo. A client double records what would be sent.

const config = { taskQueue: 'svc-main', webhookTaskQueue: 'svc-webhooks' };
const sa = (account: string, resource: string, type: string) => [
  { key: AccountId, value: account },
  { key: ResourceId, value: resource },
  { key: ResourceType, value: type },
];

function recordingClient() {
  const starts: Array<{ type: string; options: Record<string, unknown> }> = [];
  const updates: Array<{ update: string; args: unknown[]; type: string; options: Record<string, unknown> }> = [];
  const workflow = {
    async start(type: string, options: Record<string, unknown>) {
      starts.push({ type, options });
      return { workflowId: options.workflowId };
    },
    async executeUpdateWithStart(
      update: string,
      o: { args: unknown[]; startWorkflowOperation: { workflowTypeOrFunc: string; options: Record<string, unknown> } },
    ) {
      updates.push({ update, args: o.args, type: o.startWorkflowOperation.workflowTypeOrFunc, options: o.startWorkflowOperation.options });
      return { status: 'sent', gatewayMessageId: null, dispatched: true, pollsLeft: 0 };
    },
  };
  return { temporal: { workflow } as unknown as Client, starts, updates };
}

const messageInput = { accountId: 7, messageId: 11, uid: 'msg_a', channelType: 'sms' } as MessageWorkflowInput;
const messageKey = { accountId: 7, messageId: 11, uid: 'msg_a', channelType: 'sms' as const };

test('a message starts once per uid (REJECT_DUPLICATE, FAIL) with its memo; the send endpoint joins a running one', async () => {
  const c = recordingClient();
  await startWorkflow({ temporal: c.temporal, config }, messageStarter, messageKey, [messageInput]);
  const state = await executeUpdateWithStart(
    { temporal: c.temporal, config },
    messageWithOutcomeStarter,
    messageKey,
    [messageInput],
    'firstOutcome',
    [2500],
  );
  const base = {
    taskQueue: 'svc-main',
    workflowId: 'message/7/msg_a',
    workflowIdReusePolicy: 'REJECT_DUPLICATE',
    args: [messageInput],
    typedSearchAttributes: sa('7', 'msg_a', 'message'),
    memo: { messageId: 11, channelType: 'sms' },
  };
  assert.deepEqual(c.starts, [{ type: 'messageWorkflow', options: { ...base, workflowIdConflictPolicy: 'FAIL' } }]);
  assert.deepEqual(c.updates, [
    { update: 'firstOutcome', args: [2500], type: 'messageWorkflow', options: { ...base, workflowIdConflictPolicy: 'USE_EXISTING' } },
  ]);
  assert.equal(state.dispatched, true);
});

test('a new campaign never reuses its id; a resumed one starts a new run and ends the closing one', async () => {
  const c = recordingClient();
  const input = { accountId: 3, campaignId: 5, uid: 'cmp_b' } as CampaignWorkflowInput;
  const key = { accountId: 3, campaignId: 5, uid: 'cmp_b' };
  await startWorkflow({ temporal: c.temporal, config }, campaignStarter, key, [input]);
  await startWorkflow({ temporal: c.temporal, config }, campaignResumeStarter, key, [{ ...input, cursor: 40 }]);
  const base = {
    taskQueue: 'svc-main',
    workflowId: 'campaign/3/cmp_b',
    typedSearchAttributes: sa('3', 'cmp_b', 'campaign'),
    memo: { campaignId: 5 },
  };
  assert.deepEqual(c.starts, [
    {
      type: 'campaignWorkflow',
      options: { ...base, args: [input], workflowIdReusePolicy: 'REJECT_DUPLICATE', workflowIdConflictPolicy: 'FAIL' },
    },
    {
      type: 'campaignWorkflow',
      options: {
        ...base,
        args: [{ ...input, cursor: 40 }],
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'TERMINATE_EXISTING',
      },
    },
  ]);
});

test('contact imports, operation runs and webhook deliveries start once per business key', async () => {
  const c = recordingClient();
  const once = { workflowIdReusePolicy: 'REJECT_DUPLICATE', workflowIdConflictPolicy: 'FAIL' };
  await startWorkflow({ temporal: c.temporal, config }, contactImportStarter, { accountId: 2, importId: 9 }, [
    { accountId: 2, importId: 9, batchSize: 500 },
  ]);
  const run = { accountId: 2, runId: 'r-1', operationName: 'otp', input: {}, source: 'api' };
  await startWorkflow({ temporal: c.temporal, config }, operationRunStarter, { accountId: 2, runId: 'r-1' }, [run]);
  const endpoint = { accountId: 2, eventId: 'evt_1', target: { type: 'endpoint' as const, id: 4 } };
  const subscription = { accountId: 2, eventId: 'uuid-1', target: { type: 'subscription' as const, id: 6 } };
  await startWorkflow({ temporal: c.temporal, config }, webhookDeliveryStarter, endpoint, [endpoint]);
  await startWorkflow({ temporal: c.temporal, config }, webhookDeliveryStarter, { ...endpoint, redelivery: 2 }, [endpoint]);
  await startWorkflow({ temporal: c.temporal, config }, webhookDeliveryStarter, subscription, [subscription]);
  assert.deepEqual(c.starts, [
    {
      type: 'contactImportWorkflow',
      options: {
        taskQueue: 'svc-main',
        workflowId: 'contact-import/2/9',
        args: [{ accountId: 2, importId: 9, batchSize: 500 }],
        typedSearchAttributes: sa('2', '9', 'contact_import'),
        ...once,
      },
    },
    {
      type: 'operationRunWorkflow',
      options: {
        taskQueue: 'svc-main',
        workflowId: 'operation/2/r-1',
        args: [run],
        typedSearchAttributes: sa('2', 'r-1', 'operation_run'),
        ...once,
      },
    },
    {
      type: 'webhookDeliveryWorkflow',
      options: {
        taskQueue: 'svc-webhooks',
        workflowId: 'webhook/2/evt_1/4',
        args: [endpoint],
        typedSearchAttributes: sa('2', 'evt_1', 'webhook_delivery'),
        ...once,
      },
    },
    {
      type: 'webhookDeliveryWorkflow',
      options: {
        taskQueue: 'svc-webhooks',
        workflowId: 'webhook/2/evt_1/4/redeliver-2',
        args: [endpoint],
        typedSearchAttributes: sa('2', 'evt_1', 'webhook_delivery'),
        ...once,
      },
    },
    {
      type: 'webhookDeliveryWorkflow',
      options: {
        taskQueue: 'svc-webhooks',
        workflowId: 'automation/2/uuid-1/6',
        args: [subscription],
        typedSearchAttributes: sa('2', 'uuid-1', 'automation_callback'),
        ...once,
      },
    },
  ]);
});

test('a worker start keeps a running dispatcher and restarts a closed one', async () => {
  const c = recordingClient();
  const input = { channelType: 'whatsapp' } as DispatcherInput;
  await startWorkflow({ temporal: c.temporal, config }, outboundDispatcherStarter, { channelType: 'whatsapp', run: 0 }, [input]);
  await startWorkflow({ temporal: c.temporal, config }, outboundDispatcherStarter, { channelType: 'whatsapp', run: 2 }, [input]);
  assert.deepEqual(c.starts, [
    {
      type: 'outboundDispatcherWorkflow',
      options: {
        taskQueue: 'svc-main',
        workflowId: 'outbound-dispatcher/whatsapp',
        args: [input],
        typedSearchAttributes: sa('system', 'whatsapp', 'outbound-dispatcher'),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    },
    {
      type: 'outboundDispatcherWorkflow',
      options: {
        taskQueue: 'svc-main',
        workflowId: 'outbound-dispatcher/whatsapp/2',
        args: [input],
        typedSearchAttributes: sa('system', 'whatsapp/2', 'outbound-dispatcher'),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'USE_EXISTING',
      },
    },
  ]);
});

test('an automation schedule starts operation runs under operation/<account>/schedule-<uuid>', () => {
  const args = { accountId: 2, operationName: 'otp', input: {}, source: 'schedule:s-1' };
  assert.deepEqual(scheduleAction({ taskQueue: 'svc-main' }, scheduledOperationRunStarter, { accountId: 2, scheduleId: 's-1' }, [args]), {
    type: 'startWorkflow',
    workflowType: 'operationRunWorkflow',
    taskQueue: 'svc-main',
    workflowId: 'operation/2/schedule-s-1',
    args: [args],
    typedSearchAttributes: sa('2', 's-1', 'schedule'),
  });
});
