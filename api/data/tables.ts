import { HINTS, defineOperation } from '../operation.js';
import { DATA_VIEW, dataBase, dataTools } from './index.js';
import {
  listTables,
  schemaAnswerSchema,
  statesAnswerSchema,
  tableSchema,
  tableStates,
  tableSummarySchema,
} from '../../services/data/schema.js';

// The read side of table definitions: the tables a caller may see, one table's schema (what a
// client needs to draw a grid and a form and build filters) and its status fields. Native data
// envelope; a table of another account, a hidden one or an unknown id is 404 not_found.

const T = '/api/v3/data/tables';
const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;
const TABLE_PARAM =
  'The {table} path parameter is the table UUID; the table slug is accepted too (a slug names one table within the account).';

export const tableOperations = [
  defineOperation({
    ...dataBase,
    name: 'list_data_tables',
    method: 'GET',
    path: T,
    permission: DATA_VIEW,
    summary: 'List the data tables this caller may see, by name',
    description: 'Tables hidden from the caller by their view grant are left out.',
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'The visible tables',
      schema: { type: 'object', required: ['tables'], properties: { tables: { type: 'array', items: tableSummarySchema } } },
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }) => listTables(rc),
  }),
  defineOperation({
    ...dataBase,
    name: 'get_data_table_schema',
    method: 'GET',
    path: `${T}/{table}/schema`,
    permission: DATA_VIEW,
    summary:
      'Read a table: its columns with operators, rules and ui, the types map, system columns, access, limits and what the caller can do',
    description:
      `${TABLE_PARAM} access.masked_columns names the columns whose values this caller sees masked; can and actions say ` +
      'whether it may write (data.records.edit and the table’s write grant). A user column sorts only with a ready index once ' +
      'the table holds sort_index_threshold live records.',
    query: noInput,
    output: {
      kind: 'outcome',
      contract:
        'Endpoints > Data tables: {table, columns, types, system_columns, access, unique_sets, limits, sort_index_threshold, actions, can}',
      status: 200,
      description: 'The table schema',
      schema: schemaAnswerSchema,
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { table }) => tableSchema(rc, table),
  }),
  defineOperation({
    ...dataBase,
    name: 'get_data_table_states',
    method: 'GET',
    path: `${T}/{table}/states`,
    permission: DATA_VIEW,
    summary: 'Read the status fields of a table: initial states, states and the moves, each flagged allowed for this caller',
    description:
      `${TABLE_PARAM} A move is allowed when the caller may write the table and holds the move’s permission (a move without ` +
      'one is open to every writer). Moves from "*" apply from any state.',
    query: noInput,
    output: { kind: 'list', status: 200, description: 'The status fields', schema: statesAnswerSchema },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { table }) => tableStates(rc, table),
  }),
];
