import { HINTS, defineOperation } from '../operation.js';
import { DATA_VIEW, dataBase, dataTools } from './index.js';
import { getGroup, groupAnswerSchema, groupObjectSchema, listGroups } from '../../services/data/groups.js';
import { groupOverview, overviewAnswerSchema, overviewQuerySchema } from '../../services/data/overview.js';

// Data groups (organising tables; unrelated to contact groups and chat groups) as an account reads
// them. A caller sees a group through the member tables it may see: the others are left out of
// every answer, and a group with none of them visible is not found.

const G = '/api/v3/data/groups';
const noInput = { type: 'object', properties: {}, additionalProperties: true } as const;

export const groupOperations = [
  defineOperation({
    ...dataBase,
    name: 'list_data_groups',
    method: 'GET',
    path: G,
    permission: DATA_VIEW,
    summary: 'List the data groups holding at least one table this caller may see, by name',
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'The groups',
      schema: { type: 'object', required: ['groups'], properties: { groups: { type: 'array', items: groupObjectSchema } } },
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }) => listGroups(rc),
  }),
  defineOperation({
    ...dataBase,
    name: 'get_data_group',
    method: 'GET',
    path: `${G}/{group}`,
    permission: DATA_VIEW,
    summary: 'Read a data group by UUID: its member tables with their columns and its saved report summaries',
    query: noInput,
    output: {
      kind: 'resource',
      contract: 'Endpoints > Data tables: GET /data/groups/{group} answers the group, member tables with columns, saved report summaries',
      status: 200,
      description: 'The group',
      schema: groupAnswerSchema,
    },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { group }) => getGroup(rc, group),
  }),
  defineOperation({
    ...dataBase,
    name: 'get_data_group_overview',
    method: 'GET',
    path: `${G}/{group}/overview`,
    permission: DATA_VIEW,
    summary: 'Overview of a data group for a window: totals, member-table cards, amount headlines, a time series and relationships',
    description:
      'The window is range (a named range such as last_30_days, or a JSON object {"from","to"}), or from and to; default ' +
      'last_30_days. Dates are whole UTC days (to includes its day); a date and time needs a timezone. The series is cut ' +
      'into hour, day, week (from Monday) or month buckets by the window length (up to 2 days, 92 days, 2 years, longer), ' +
      'all in UTC, empty buckets included. Figures count live records; headlines sum and average number and currency ' +
      'columns over the records created in the window, leaving out columns masked for the caller. A bad range answers ' +
      '422 with field range (or from/to).',
    query: overviewQuerySchema,
    output: { kind: 'outcome', status: 200, description: 'The overview', schema: overviewAnswerSchema },
    mcp: { ...dataTools, annotations: HINTS.read },
    handler: async ({ rc }, { group, range, from, to }) => groupOverview(rc, group, { range, from, to }),
  }),
];
