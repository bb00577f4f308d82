// Records the template workflows' histories for the replay test:
//   npx tsx scripts/record-templates.ts
// A stack of its own (reviews polled every second): a review approved by the status webhook, one
// rejected, one the provider refused at submission, one decided without a webhook and read by the
// review's poll; and the awaited calls: a refresh, a sync and a delete.
// test/replay/histories/{templateReviewWorkflow,templateCallWorkflow}/<scenario>.json. Re-record
// after a change to workflows/templates/.
import type { Client } from '@temporalio/client';
import { templateReviewWorkflowId } from '../workflows/templates/template-review.starter.js';
import { withRecorder } from './recorder.js';

const REVIEW = 'templateReviewWorkflow';
const CALL = 'templateCallWorkflow';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The account's template-call workflows, oldest first, once `count` are listed. */
async function callsOf(client: Client, accountId: number, count: number) {
  for (let i = 0; i < 200; i++) {
    const ids: { id: string; at: number }[] = [];
    for await (const w of client.workflow.list({ query: `WorkflowType = '${CALL}' AND AccountId = '${accountId}'` }))
      ids.push({ id: w.workflowId, at: w.startTime.getTime() });
    if (ids.length >= count) return ids.sort((a, b) => a.at - b.at).map((x) => x.id);
    await sleep(250);
  }
  throw new Error('the template calls are not listed');
}

await withRecorder(
  'svc-record-templates',
  { TEMPLATE_REVIEW_POLL_SECONDS: '1', TEMPLATE_REVIEW_POLL_MAX_SECONDS: '2' },
  'Templates recorder',
  async ({ client, account, admin, api, sim, save }) => {
    const waba = `WABA${account.id}`;
    await admin('POST', `/accounts/${account.id}/phone-numbers`, {
      number: '+255700000301',
      capabilities: ['whatsapp'],
      provider_phone_number_id: `56${account.id}0001`,
      business_account_id: waba,
    });
    const create = async (name: string) => {
      const r = await api('POST', '/api/v3/whatsapp/templates', {
        name,
        category: 'UTILITY',
        components: [{ type: 'BODY', text: 'Hello {{1}}, your order is ready.', example: { body_text: [['Ann']] } }],
      });
      return r;
    };
    const review = (id: number) => client.workflow.getHandle(templateReviewWorkflowId(account.id, String(id)));

    const approved = await create('order_ready');
    await save(REVIEW, 'approved-by-webhook', review(approved.data.id));
    const rejected = await create('reject_order_ready');
    await save(REVIEW, 'rejected', review(rejected.data.id));
    const refused = await create('refuse_order_ready');
    if (refused.status !== 'error') throw new Error(`expected a refusal: ${JSON.stringify(refused)}`);
    // The refused review's id is the template id it had: the next id after the rejected one's.
    await save(REVIEW, 'refused', review(rejected.data.id + 1));

    await sim('POST', '/_sim/whatsapp/templates/config', { webhooks: false });
    const held = await create('hold_order_ready');
    await sleep(2500);
    await sim('POST', `/_sim/whatsapp/templates/${held.data.provider_template_id}/status`, { event: 'APPROVED' });
    await save(REVIEW, 'polled', review(held.data.id));

    await api('POST', `/api/v3/whatsapp/templates/${approved.data.id}/refresh`, {});
    await api('POST', '/api/v3/whatsapp/templates/sync', {});
    await api('DELETE', `/api/v3/whatsapp/templates/${rejected.data.id}`);
    const [refresh, sync, del] = await callsOf(client, account.id, 3);
    await save(CALL, 'refresh', client.workflow.getHandle(refresh));
    await save(CALL, 'sync', client.workflow.getHandle(sync));
    await save(CALL, 'delete', client.workflow.getHandle(del));
  },
);
