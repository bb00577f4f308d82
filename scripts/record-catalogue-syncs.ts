// Records the product batch's histories for the replay test:
//   npx tsx scripts/record-catalogue-syncs.ts
// A stack of its own with two-row ingest chunks (every scenario loops), then
// test/replay/histories/catalogueSyncWorkflow/<scenario>.json. Re-record after a change to the
// batch workflow or to its steps (workflows/catalogues/sync-steps.ts; the feed pull runs them too).
import { catalogueSyncWorkflowId } from '../workflows/catalogues/catalogue-sync.starter.js';

const TYPE = 'catalogueSyncWorkflow';
import { withRecorder } from './recorder.js';

await withRecorder(
  'svc-record-syncs',
  { CATALOGUE_SYNC_CHUNK_SIZE: '2' },
  'Sync recorder',
  async ({ client, account, api: apiCall, save: saveHistory }) => {
    const save = (scenario: string, syncId: number) =>
      saveHistory(TYPE, scenario, client.workflow.getHandle(catalogueSyncWorkflowId(account.id, syncId)));
    const batch = async (shop: number, body: unknown) => (await apiCall('POST', `/api/v3/catalogues/${shop}/products/batch`, body)).data.id;

    // A shop on no platform: good rows land, bad ones are rejected, a name-only row gets a sku.
    const plain = (await apiCall('POST', '/api/v3/catalogues', { name: 'Recorded batches', channels: [], default_currency: 'TZS' })).data;
    await save(
      'upsert-with-problems',
      await batch(plain.id, {
        products: [
          { sku: 'A', name: 'Apple', price: 100, inventory: 3 },
          { sku: 'B', name: 'Banana', price: -1 },
          { name: 'Cherry', price: 300 },
          'not a row',
          { sku: 'A', name: 'Apple again', price: 1 },
        ],
      }),
    );
    // Replace: what the payload leaves out is retired.
    await save('replace-retires', await batch(plain.id, { mode: 'replace', products: [{ sku: 'A', name: 'Apple', price: 120 }] }));
    // Replace with no storable row: nothing retired, the run fails.
    await save('replace-nothing-stored', await batch(plain.id, { mode: 'replace', products: [{ sku: 'A', price: 'abc' }] }));

    // A shop on the storefront: the changed products are pushed (one blocked: zero price).
    const listed = (await apiCall('POST', '/api/v3/catalogues', { name: 'Recorded storefront', channels: ['storefront'] })).data;
    await save(
      'pushed-storefront',
      await batch(listed.id, {
        products: [
          { sku: 'S1', name: 'Shown', price: 100 },
          { sku: 'S2', name: 'Free', price: 0 },
        ],
      }),
    );

    // A shop on the chat provider's catalogue: the push polls the provider's batch handle.
    const chat = (await apiCall('POST', '/api/v3/catalogues', { name: 'Recorded chat shop', channels: ['whatsapp'] })).data;
    await save(
      'pushed-whatsapp',
      await batch(chat.id, {
        products: [
          { sku: 'W1', name: 'Pictured', price: 100, image_url: 'https://img.example.com/w1.png' },
          { sku: 'W2', name: 'No picture', price: 100 },
        ],
      }),
    );
  },
);
