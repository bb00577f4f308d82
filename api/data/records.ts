import { HINTS, defineOperation, type Operation } from '../operation.js';
import { DATA_EDIT, DATA_VIEW, dataBase, dataDeleteTools, dataTools, dataWriteTools } from './index.js';
import { DATA_LIMITS, FIELD_TYPES, HISTORY_ACTIONS } from '../../domain/data/vocabulary.js';
import { createRecord, deleteRecord, getRecord, updateRecord } from '../../services/data/records.js';
import { recordHistory } from '../../services/data/history.js';

// One record of a data table: read, create, merge, soft-delete, and its history (Endpoints > Data
// tables; write rules). Reads need data.view, writes data.records.edit and the table's write grant;
// a table or record of another account, or one the caller cannot see, is 404 not_found.

const T = '/api/v3/data/tables/{table}/records';
const R = `${T}/{record}`;

/** A record as every data door answers it (values masked for the caller where the table says so). */
export const recordSchema = {
  type: 'object',
  required: ['id', 'data', 'source', 'created_at', 'updated_at', 'title'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    data: { type: 'object', description: 'Stored values keyed by column key, in column order; a masked value is a display string only.' },
    source: { type: 'string', description: 'Where the record was created (api for this API); never changes.' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    title: { type: ['string', 'null'], description: 'The title column’s value (or the first text column’s), masked like it.' },
    titles: {
      type: 'object',
      additionalProperties: { type: ['string', 'null'] },
      description: 'Relation values’ titles by related record id (tables with relation columns).',
    },
  },
} as const;

const recordAnswer = { type: 'object', required: ['record'], properties: { record: recordSchema } } as const;

const writeBody = {
  type: 'object',
  required: ['data'],
  additionalProperties: false,
  properties: {
    data: {
      type: 'object',
      description:
        'Values keyed by column key. Unknown keys and auto_number keys are refused; values are coerced by the field value rules ' +
        '(numbers from numeric strings with min/max/precision; currency a plain amount; date YYYY-MM-DD; datetime ISO 8601 with ' +
        'a timezone, stored in UTC; phone to E.164 with the column region, TZ by default; email validated; select an option key, ' +
        'multi_select a list of them; relation a record UUID or {id}; file a descriptor {name, url?, size?, mime?}, a list when ' +
        `the column allows several). null clears an optional value. At most ${DATA_LIMITS.recordBytes} bytes serialized.`,
    },
  },
} as const;

const historyEntrySchema = {
  type: 'object',
  required: ['id', 'record', 'action', 'changed', 'before', 'after', 'actor', 'source', 'reason', 'created_at'],
  properties: {
    id: { type: 'string' },
    record: { type: 'string', format: 'uuid' },
    action: { enum: [...HISTORY_ACTIONS] },
    changed: { type: 'array', items: { type: 'string' }, description: 'column keys this write changed' },
    before: { type: 'object', description: 'changed values before the write (masked for the caller)' },
    after: { type: 'object', description: 'changed values after the write (masked for the caller)' },
    actor: {
      type: 'object',
      required: ['kind'],
      properties: { kind: { type: 'string' } },
      description: 'who wrote: kind (api_key, mcp_credential, oauth_client, operator, system) and ids; never a secret',
    },
    source: { type: 'string' },
    reason: { type: ['string', 'null'] },
    created_at: { type: 'string', format: 'date-time' },
  },
} as const;

const refusals = {
  402: 'quota_exceeded: the table’s records or storage quota (details: quota, limit, used)',
  403: 'permission_denied: no write grant on the table, or a status move needing a permission the caller lacks',
  409: 'conflict: an illegal status move, or a unique value a concurrent write took',
  422: 'validation_error: unknown keys, values against the field rules, required values, duplicates, over 8192 bytes',
};

/** The contract spells out the data envelope of a record (GET, POST, PATCH): {record}. It wins over the presentation rule. */
const RECORD_CONTRACT = 'Endpoints > Data tables: {record}, in the native envelope';

export const recordOperations: Operation[] = [
  defineOperation({
    ...dataBase,
    name: 'get_data_record',
    method: 'GET',
    path: R,
    permission: DATA_VIEW,
    summary: 'Read one record of a data table',
    description: 'A live record with its title and, for relation columns, the related records’ titles; masked values for the caller.',
    output: { kind: 'resource', contract: RECORD_CONTRACT, status: 200, description: 'The record', schema: recordAnswer },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { table, record }) => getRecord(rc, table, record),
  }),
  defineOperation({
    ...dataBase,
    name: 'create_data_record',
    method: 'POST',
    path: T,
    permission: DATA_EDIT,
    summary: 'Create a record in a data table',
    description:
      'Values are checked and coerced column by column (every problem is named in errors); required columns must be given unless ' +
      'they have a default; status fields start in an initial state; auto_number columns are issued by the service. source is api.',
    body: writeBody,
    output: { kind: 'resource', contract: RECORD_CONTRACT, status: 201, description: 'The created record', schema: recordAnswer },
    refusals,
    mcp: { ...dataWriteTools, annotations: HINTS.write },
    // Its one write statement (services/data/records.ts createStatement) can count and admit the request too.
    admitsInStatement: true,
    handler: async ({ rc }, { table, data }) => createRecord(rc, table, data),
  }),
  defineOperation({
    ...dataBase,
    name: 'update_data_record',
    method: 'PATCH',
    path: R,
    permission: DATA_EDIT,
    summary: 'Change values of a record (merge)',
    description:
      'Only the keys sent change; null clears an optional value (clearing a required one is 422). A status field may only make a ' +
      'listed move (409 otherwise when the machine is strict; 403 when the move needs a permission the caller lacks). No ' +
      'precondition: the last accepted write wins. A masked display value sent back is written as the value it reads. Answers ' +
      'the full current record.',
    body: writeBody,
    output: { kind: 'resource', contract: RECORD_CONTRACT, status: 200, description: 'The record after the write', schema: recordAnswer },
    refusals,
    mcp: { ...dataWriteTools, annotations: HINTS.update },
    handler: async ({ rc }, { table, record, data }) => updateRecord(rc, table, record, data),
  }),
  defineOperation({
    ...dataBase,
    name: 'delete_data_record',
    method: 'DELETE',
    path: R,
    permission: DATA_EDIT,
    summary: 'Delete a record (soft delete)',
    description: 'The record leaves every read and frees its quota and unique values; its history stays readable. A repeat is 404.',
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Deleted',
      schema: {
        type: 'object',
        required: ['ok', 'deleted'],
        properties: { ok: { const: true }, deleted: { const: 1 } },
      },
    },
    mcp: { ...dataDeleteTools, annotations: HINTS.remove },
    handler: async ({ rc }, { table, record }) => deleteRecord(rc, table, record),
  }),
  defineOperation({
    ...dataBase,
    name: 'data_record_history',
    method: 'GET',
    path: `${R}/history`,
    permission: DATA_VIEW,
    summary: 'A record’s change history, newest first',
    description:
      `At most ${DATA_LIMITS.historyPage} entries a page; pass next_before back unchanged as before for the next page. ` +
      'Readable after the record was deleted. Values are masked for the caller as on the record.',
    query: {
      type: 'object',
      properties: { before: { type: 'string', maxLength: 64, description: 'next_before of the previous page, unchanged' } },
    },
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of history',
      schema: {
        type: 'object',
        required: ['entries', 'has_more', 'next_before', 'columns'],
        properties: {
          entries: { type: 'array', items: historyEntrySchema },
          has_more: { type: 'boolean' },
          next_before: { type: ['string', 'null'] },
          columns: {
            type: 'array',
            items: {
              type: 'object',
              required: ['key', 'label', 'type'],
              properties: { key: { type: 'string' }, label: { type: 'string' }, type: { enum: [...FIELD_TYPES] } },
            },
          },
        },
      },
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { table, record, before }) => recordHistory(rc, table, record, before),
  }),
];
