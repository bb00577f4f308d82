import { HINTS, defineOperation } from '../operation.js';
import { numericId } from '../../services/platform/ids.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { listAccountNotices, listNotices, noticeQuerySchema, noticeSchema } from '../../services/account/notices.js';

// Account notices: what the service told the account (low stock, a feed switched off). Read with any
// valid key of the account (like the profile and balance), and by the operator.

const noticePage = pageSchema('notices', noticeSchema);

export const noticeOperations = [
  defineOperation({
    name: 'list_notices',
    method: 'GET',
    path: '/api/v3/notices',
    tag: 'Profile',
    summary: 'Notices the service gave the account, newest first',
    description: 'Page-number pagination: default 20, at most 100; limit wins over per_page.',
    auth: 'rest',
    query: noticeQuerySchema,
    output: { kind: 'list', status: 200, description: 'A page of notices', schema: noticePage },
    mcp: { servers: ['overview', 'account'], scope: 'mcp:overview', annotations: HINTS.read },
    handler: async ({ rc }, query) => listNotices(rc, query),
  }),
];

export const noticeSettingsOperations = [
  defineOperation({
    name: 'admin_list_notices',
    method: 'GET',
    path: '/admin/v1/accounts/{account}/notices',
    tag: 'Settings (operator)',
    auth: 'operator',
    summary: 'Notices the service gave an account, newest first',
    query: noticeQuerySchema,
    output: { kind: 'list', status: 200, description: 'A page of notices', schema: noticePage },
    cli: [{ command: 'notices:list', help: 'Notices the service gave an account (low stock, feeds switched off), newest first' }],
    handler: async ({ oc }, { account, ...query }) => listAccountNotices(oc, numericId(account, 'Account'), query),
  }),
];
