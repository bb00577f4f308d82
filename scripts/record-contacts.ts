// Contact import scenarios for `npm run record-history` (called by record-history.ts, whose stack
// runs with CONTACT_IMPORT_BATCH_SIZE=2 so every scenario loops over several batches).
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';
import { contactImportWorkflowId } from '../temporal/ids.js';
import { projectRoot } from './stack.js';

interface Ctx {
  client: Client;
  accountId: number;
  /** Calls the API with a key that has an issuer (contact groups need one). */
  apiCall: (method: string, p: string, body?: unknown) => Promise<any>;
  save: (type: string, scenario: string, workflowId: string) => Promise<void>;
}

const TYPE = 'contactImportWorkflow';

export async function recordContactScenarios(c: Ctx) {
  const group = (await c.apiCall('POST', '/api/v3/contact-groups', { name: 'Recorded imports' })).data;
  const importInto = async (body: unknown) => (await c.apiCall('POST', `/api/v3/contact-groups/${group.id}/imports`, body)).data;

  const json = await importInto({
    contacts: [
      { PHONE: '0712000001', country_code: '255', name: 'Ann' },
      { name: 'no phone' },
      'not an object',
      { PHONE: '+255 712 000 001', country_code: '255', city: 'Dar' },
      { PHONE: '0712000002' },
    ],
  });
  await c.save(TYPE, 'json-with-problems', contactImportWorkflowId(c.accountId, json.id));

  const csv = await importInto({ csv: 'PHONE,NAME,city\n0713000001,"Lee, Ann",Dar\n0713000002,Bob,Moshi,extra\n0713000003,Cy,\n' });
  await c.save(TYPE, 'csv', contactImportWorkflowId(c.accountId, csv.id));

  // More batches than one run takes: the first run ends in continue-as-new, which is the history kept.
  const big = await importInto({ contacts: Array.from({ length: 102 }, (_, i) => ({ PHONE: `0714${String(i).padStart(6, '0')}` })) });
  const workflowId = contactImportWorkflowId(c.accountId, big.id);
  await c.client.workflow.getHandle(workflowId).result();
  const last = await c.client.workflow.getHandle(workflowId).fetchHistory();
  const firstRunId = last.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  if (!firstRunId) throw new Error('the large import did not continue as new');
  const file = path.join(projectRoot, 'test/replay/histories', TYPE, 'continued-as-new.json');
  fs.writeFileSync(file, historyToJSON(await c.client.workflow.getHandle(workflowId, firstRunId).fetchHistory()));
  process.stdout.write(`recorded ${path.relative(projectRoot, file)}\n`);
}
