import { HINTS, defineOperation } from '../operation.js';
import { groupSchema, importSchema } from '../../services/contacts/contact-view.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { groupBody, groupListQuery, importBody } from '../../services/contacts/contact-schemas.js';
import { listGroups, createGroup, getGroup, renameGroup, deleteGroup } from '../../services/contacts/contact-groups.js';
import { createImport, getImport } from '../../services/contacts/contact-imports.js';
import { noInput } from '../../services/platform/storable.js';
import { deletedSchema } from '../answers.js';

// Contact groups and bulk imports: an endpoint family added after 7 September 2026, so every route
// names an issuer permission (and keys without an issuer are refused).

const mcpContacts = { servers: ['contacts'], scope: 'mcp:contacts' } as const;
const base = { tag: 'Contact groups', auth: 'rest' } as const;
const G = '/api/v3/contact-groups';

export const contactGroupOperations = [
  defineOperation({
    ...base,
    name: 'list_contact_groups',
    method: 'GET',
    path: G,
    permission: 'contacts.view',
    summary: 'List contact groups, newest first',
    query: groupListQuery,
    description: 'Page-number pagination: default 20, at most 100; limit wins over per_page.',
    output: {
      kind: 'list',
      status: 200,
      description: 'A page of groups',
      schema: pageSchema('groups', groupSchema),
    },
    mcp: { ...mcpContacts, annotations: HINTS.read },
    handler: async ({ rc }, query) => listGroups(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'create_contact_group',
    method: 'POST',
    path: G,
    permission: 'contacts.create',
    summary: 'Create a contact group',
    body: groupBody,
    output: { kind: 'resource', status: 201, description: 'The group', schema: groupSchema },
    mcp: { ...mcpContacts, elevation: 'mcp:write', annotations: HINTS.write },
    handler: async ({ rc }, { name }) => createGroup(rc, name),
  }),
  defineOperation({
    ...base,
    name: 'get_contact_group',
    method: 'GET',
    path: `${G}/{group}`,
    permission: 'contacts.view',
    summary: 'Read a group by numeric id or UUID',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The group', schema: groupSchema },
    mcp: { ...mcpContacts, annotations: HINTS.read },
    handler: async ({ rc }, { group }) => getGroup(rc, group),
  }),
  defineOperation({
    ...base,
    name: 'rename_contact_group',
    method: 'PATCH',
    path: `${G}/{group}`,
    permission: 'contacts.edit',
    summary: 'Rename a group',
    body: groupBody,
    output: { kind: 'resource', status: 200, description: 'The group', schema: groupSchema },
    mcp: {
      ...mcpContacts,
      elevation: 'mcp:write',
      annotations: HINTS.update,
    },
    handler: async ({ rc }, { group, name }) => renameGroup(rc, group, name),
  }),
  defineOperation({
    ...base,
    name: 'delete_contact_group',
    method: 'DELETE',
    path: `${G}/{group}`,
    permission: 'contacts.delete',
    summary: 'Delete a group with its contacts and imports',
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Deleted',
      schema: deletedSchema({ id: { type: 'integer' }, uid: { type: 'string' } }),
    },
    mcp: {
      ...mcpContacts,
      elevation: 'mcp:delete',
      annotations: HINTS.remove,
    },
    handler: async ({ rc }, { group }) => deleteGroup(rc, group),
  }),
  defineOperation({
    ...base,
    name: 'import_contacts',
    method: 'POST',
    path: `${G}/{group}/imports`,
    permission: 'contacts.import',
    summary: 'Import contacts into the group in the background (CSV or JSON)',
    body: importBody,
    description:
      'Answers 202 with the import; a workflow writes the rows in batches. Rows follow the contact create rules; a row whose full number ' +
      'matches a contact of the group (or an earlier row) replaces it as an update would. Problems are kept per row (the first 200).',
    output: { kind: 'resource', status: 202, description: 'Import accepted', schema: importSchema },
    mcp: { ...mcpContacts, elevation: 'mcp:write', annotations: HINTS.write },
    handler: async ({ rc, deps }, { group, ...request }) => createImport(rc, deps, group, request),
  }),
  defineOperation({
    ...base,
    name: 'get_contact_import',
    method: 'GET',
    path: `${G}/{group}/imports/{import}`,
    permission: 'contacts.view',
    summary: 'Progress and problems of an import',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The import', schema: importSchema },
    mcp: { ...mcpContacts, annotations: HINTS.read },
    handler: async ({ rc }, input) => getImport(rc, input.group, input.import),
  }),
];
