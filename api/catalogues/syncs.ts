import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { storableValue } from '../../services/platform/storable.js';
import { productRowSchema } from '../../services/catalogues/product-schemas.js';
import { catalogueListQuery } from '../../services/catalogues/catalogues.js';
import { acceptBatch, getSync, listSyncs, syncReportSchema } from '../../services/catalogues/syncs.js';
import { CATALOGUE_LIMITS, SYNC_MODES } from '../../domain/catalogues/vocabulary.js';
import { CATALOGUE_MANAGE, CATALOGUE_VIEW, catalogueTools, catalogueWriteTools } from './catalogues.js';

// Product batch sync and the sync run reports. The batch answers 202 at once with the run (status
// queued); a workflow judges and applies the rows, so a bad row is one rejected row in the report,
// never a refusal of the whole request. The request itself (rows, mode, key) is checked here.

const batchBody = {
  type: 'object',
  required: ['products'],
  additionalProperties: false,
  properties: {
    mode: {
      enum: [...SYNC_MODES],
      description:
        'upsert (default) leaves products the payload does not mention alone; replace retires them (destructive for partial payloads)',
    },
    products: {
      type: 'array',
      minItems: 1,
      maxItems: CATALOGUE_LIMITS.batchRows,
      description:
        `At most ${CATALOGUE_LIMITS.batchRows} rows. Rows match stored products on sku (or retailer_id) when sent, otherwise on name; ` +
        'a field a row leaves out keeps its stored value. A row that breaks the product rules is one rejected row (stage ingest) and the rest land.',
      // Each row is judged by the run (a bad row is a rejected row, not a refused request); validating
      // 5,000 rows here as well cost 60-360 ms of the API's time per batch for nothing. The row schema
      // is shown to clients under x-row-schema.
      // A row is judged by the run, but it must be storable JSON (no NUL in a key or text at any depth,
      // nested at most a few levels): the server refuses anything else for the whole request, so the
      // schema says so (Schemathesis found a NUL in a nested key refused though the schema admitted it).
      items: {
        ...storableValue,
        description: 'A product row: the fields of a product create (x-row-schema). Unknown fields and bad values reject the row.',
        examples: [{ sku: 'TEE-RED-M', name: 'Red tee, M', price: 1500, currency: 'USD', inventory: 12, brand: 'Acme' }],
        'x-row-schema': productRowSchema,
      },
    },
    idempotency_key: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'The Idempotency-Key header, for callers that cannot send headers (MCP tools); the header wins when both are sent.',
    },
  },
} as const;

const syncListSchema = pageSchema('syncs', syncReportSchema);

const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const base = { tag: 'Catalogue', auth: 'rest', issuerRequired: true } as const;
const C = '/api/v3/catalogues/{catalogue}';

export const catalogueSyncOperations = [
  defineOperation({
    ...base,
    name: 'sync_products',
    method: 'POST',
    path: `${C}/products/batch`,
    permission: CATALOGUE_MANAGE,
    summary: 'Create, update (and in replace mode retire) products in the background',
    description:
      'Answers 202 with the sync run (id and sync_id are the sync id; status queued); poll GET …/syncs/{sync} until completed or failed. ' +
      'The run stores each good row (rejected rows are reported with stage ingest), retires products missing from a replace payload, ' +
      'then pushes the changed products to the shop platforms (problems with a platform stage: stored, not shown there yet). ' +
      'Idempotency-Key: the same key with the same request answers the earlier run with replayed true (202, nothing imported again); ' +
      'the same key with another request is 409. Keys are kept per catalogue.',
    body: batchBody,
    headers: { 'Idempotency-Key': 'idempotency_key' },
    bodyLimitBytes: 16 * 1024 * 1024,
    output: { kind: 'resource', status: 202, description: 'The sync run, accepted (or replayed)', schema: syncReportSchema },
    refusals: { 409: 'the Idempotency-Key was used with a different request on this catalogue' },
    mcp: { ...catalogueWriteTools, annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, { catalogue, ...request }) => acceptBatch(rc, deps, catalogue, request),
  }),
  defineOperation({
    ...base,
    name: 'list_catalogue_syncs',
    method: 'GET',
    path: `${C}/syncs`,
    permission: CATALOGUE_VIEW,
    summary: 'Past sync runs of a shop, newest first (batches, feed pulls, spreadsheet imports)',
    description: 'Page-number pagination: default 25, at most 100; limit wins over per_page; a nonpositive value reads as the default.',
    query: catalogueListQuery,
    output: { kind: 'list', status: 200, description: 'A page of sync run reports', schema: syncListSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, ...query }) => listSyncs(rc, catalogue, query),
  }),
  defineOperation({
    ...base,
    name: 'get_catalogue_sync',
    method: 'GET',
    path: `${C}/syncs/{sync}`,
    permission: CATALOGUE_VIEW,
    summary: 'The sync run report',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The sync run report', schema: syncReportSchema },
    mcp: { ...catalogueTools, annotations: HINTS.read },
    handler: async ({ rc }, { catalogue, sync }) => getSync(rc, catalogue, sync),
  }),
];
