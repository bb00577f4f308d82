import { HINTS, defineOperation, type Operation } from '../operation.js';
import { DATA_LIMITS, OPERATORS } from '../../domain/data/vocabulary.js';
import { listRecords } from '../../services/data/records-query.js';
import { DATA_VIEW, dataBase, dataTools } from './index.js';

// GET …/records (Endpoints > Data tables, Records list query): the condition tree, q, sort, dir,
// limit, cursor and with_count, answered in the native envelope.

const recordSchema = {
  type: 'object',
  required: ['id', 'data', 'source', 'created_at', 'updated_at', 'title'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    data: { type: 'object', description: 'values by column key, in column order; masked values as the table’s masks say' },
    source: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    title: { type: ['string', 'null'] },
    titles: { type: 'object', description: 'titles of related records, by record id' },
  },
} as const;

const BIG = Number.MAX_SAFE_INTEGER;

const listQuery = {
  type: 'object',
  properties: {
    filter: {
      type: 'string',
      // The whole request line must fit the HTTP server's 16 KiB header limit, the cursor included.
      maxLength: 8_192,
      description:
        `URL-encoded JSON condition tree; absent or {} selects every visible record. A leaf is {column, op, value} (column: a column ` +
        `key or $id, $created_at, $updated_at, $source); {all:[…]} is AND, {any:[…]} is OR; at most ${DATA_LIMITS.filterLeaves} ` +
        `leaves, ${DATA_LIMITS.filterDepth} groups deep. Operators: ${OPERATORS.join(', ')}; only those the column's type advertises ` +
        `(schema: types) are served, another is 501 not_supported. between takes [low, high] (inclusive), in a list of 1-100 values, ` +
        `is_empty / is_not_empty no value; date-times need a timezone. A leaf on a column masked for the caller is 403 permission_denied ` +
        `naming it.`,
    },
    q: {
      type: 'string',
      maxLength: 200,
      description: `case-insensitive search over the first ${DATA_LIMITS.searchColumns} text, long_text, phone and email columns, less those masked for the caller; ignored when there are none; combines with filter`,
    },
    sort: {
      type: 'string',
      maxLength: 64,
      description: `a column key, $created_at or $updated_at (default $created_at). A user column of a table holding ${DATA_LIMITS.sortIndexThreshold} or more records needs a ready index (else 501, reason sort_needs_index); a column masked for the caller is 403 permission_denied.`,
    },
    dir: { type: 'string', enum: ['asc', 'desc'], description: 'default desc; records without a value come last either way' },
    limit: {
      type: 'integer',
      minimum: -BIG,
      maximum: BIG,
      description: `default ${DATA_LIMITS.pageDefault}; clamped to 1-${DATA_LIMITS.pageMax}`,
    },
    cursor: {
      type: 'string',
      // A cursor holds the last sort value (at most a record's 8,192 bytes), sealed: base64url with IV and tag.
      maxLength: 12_288,
      description:
        'next_cursor of the previous page (opaque and sealed), with the same filter, q, sort and dir; an invalid one, or one of another table, restarts at the first page',
    },
    with_count: {
      type: 'boolean',
      description: `true: count is filled (exact up to ${DATA_LIMITS.countCap}; above, the planner's estimate with count_is_exact false); else null`,
    },
  },
} as const;

export const recordListOperations: Operation[] = [
  defineOperation({
    ...dataBase,
    name: 'list_data_records',
    method: 'GET',
    path: '/api/v3/data/tables/{table}/records',
    permission: DATA_VIEW,
    summary: 'List a table’s records: filter tree, search, sort and cursor pages',
    description:
      'Records of one table the caller may see, newest created first unless sorted otherwise. Pages are keyset pages: pass ' +
      'next_cursor back with the same filter, q, sort and dir; records written meanwhile never make a page skip or repeat a record. ' +
      'A malformed filter, an unknown column or operator, a value of the wrong type or an unsortable column is 422; an operator ' +
      'the column type does not advertise, or a sort needing an index that is not ready, is 501. A filter or sort on a column ' +
      'masked for the caller is 403 permission_denied naming the column; q does not search masked columns.',
    query: listQuery,
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of records',
      schema: {
        type: 'object',
        required: ['records', 'next_cursor', 'has_more', 'count', 'served_at'],
        properties: {
          records: { type: 'array', items: recordSchema },
          next_cursor: { type: ['string', 'null'] },
          has_more: { type: 'boolean' },
          count: { type: ['integer', 'null'], description: 'null unless with_count=true' },
          count_is_exact: {
            type: 'boolean',
            description: `with_count only: false when count is the planner's estimate (more than ${DATA_LIMITS.countCap} records match)`,
          },
          served_at: { type: 'string', format: 'date-time' },
        },
      },
    },
    refusals: {
      403: 'Suspended account or missing issuer permission; or a filter leaf or sort on a column masked for the caller (permission_denied, error.field and details.column name it)',
      501: 'an operator the column type does not advertise, or a sort that needs an index not ready yet',
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { table, ...query }) => listRecords(rc, table, query),
  }),
];
