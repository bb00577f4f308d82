import type { AppDeps } from '../app.js';
import { successOf, emptyQuery, type RouteDef } from '../registry.js';
import { groupSchema, importSchema } from '../../services/contact-view.js';
import { paginationSchema, pageQueryProperties } from '../../services/pagination.js';
import { listGroups, createGroup, getGroup, renameGroup, deleteGroup } from '../../services/contact-groups.js';
import { createImport, getImport, type ImportRequest } from '../../services/contact-imports.js';
import { MAX_IMPORT_ROWS } from '../../domain/contact-import.js';

// Contact groups and bulk imports: an endpoint family added after 7 September 2026, so every route
// names an issuer permission (and keys without an issuer are refused).

const groupBody = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 160 } } } as const;

const groupListQuery = {
  type: 'object',
  properties: {
    search: { type: 'string', maxLength: 160, description: 'matches the group name' },
    ...pageQueryProperties,
  },
} as const;

const importBody = {
  type: 'object',
  description: `Either contacts (JSON objects with the fields of a contact create) or csv (a header row naming the fields, e.g. PHONE,NAME,city). At most ${MAX_IMPORT_ROWS} rows.`,
  properties: {
    format: { enum: ['json', 'csv'], description: 'defaults to csv when csv is sent, else json' },
    contacts: { type: 'array', minItems: 1, maxItems: MAX_IMPORT_ROWS },
    csv: { type: 'string', minLength: 1, description: 'RFC 4180: comma separated, double quotes, first record is the header' },
  },
} as const;

const groupResponse = successOf(groupSchema);
const importResponse = successOf({ type: 'object', required: ['import'], properties: { import: importSchema } });
const ok = (data: unknown, status = 200) => ({ status, body: { status: 'success', data } });

export function contactGroupRoutes(deps: AppDeps): RouteDef[] {
  const base = { tag: 'Contact groups', auth: 'rest' as const };
  const G = '/api/v3/contact-groups';
  return [
    {
      ...base, method: 'GET', path: G, permission: 'contacts.view', summary: 'List contact groups, newest first', query: groupListQuery,
      description: 'Page-number pagination: default 20, at most 100; limit wins over per_page.',
      response: { status: 200, description: 'A page of groups', schema: successOf({ type: 'object', required: ['groups', 'pagination'], properties: { groups: { type: 'array', items: groupSchema }, pagination: paginationSchema } }) },
      handler: async ({ rc, query }) => ok(await listGroups(rc, query)),
    },
    {
      ...base, method: 'POST', path: G, permission: 'contacts.create', summary: 'Create a contact group', body: groupBody,
      response: { status: 201, description: 'The group', schema: groupResponse },
      handler: async ({ rc, body }) => ok(await createGroup(rc, body.name), 201),
    },
    {
      ...base, method: 'GET', path: `${G}/{group}`, permission: 'contacts.view', summary: 'Read a group by numeric id or UUID', query: emptyQuery,
      response: { status: 200, description: 'The group', schema: groupResponse },
      handler: async ({ rc, params }) => ok(await getGroup(rc, params.group)),
    },
    {
      ...base, method: 'PATCH', path: `${G}/{group}`, permission: 'contacts.edit', summary: 'Rename a group', body: groupBody,
      response: { status: 200, description: 'The group', schema: groupResponse },
      handler: async ({ rc, params, body }) => ok(await renameGroup(rc, params.group, body.name)),
    },
    {
      ...base, method: 'DELETE', path: `${G}/{group}`, permission: 'contacts.delete', summary: 'Delete a group with its contacts and imports',
      response: { status: 200, description: 'Deleted', schema: successOf({ type: 'object', required: ['id', 'uid', 'deleted'], properties: { id: { type: 'integer' }, uid: { type: 'string' }, deleted: { const: true } } }) },
      handler: async ({ rc, params }) => ok(await deleteGroup(rc, params.group)),
    },
    {
      ...base, method: 'POST', path: `${G}/{group}/imports`, permission: 'contacts.import', summary: 'Import contacts into the group in the background (CSV or JSON)', body: importBody,
      description: 'Answers 202 with the import; a workflow writes the rows in batches. Rows follow the contact create rules; a row whose full number '
        + 'matches a contact of the group (or an earlier row) replaces it as an update would. Problems are kept per row (the first 200).',
      response: { status: 202, description: 'Import accepted', schema: importResponse },
      handler: async ({ rc, params, body }) => ok({ import: await createImport(rc, deps, params.group, body as ImportRequest) }, 202),
    },
    {
      ...base, method: 'GET', path: `${G}/{group}/imports/{import}`, permission: 'contacts.view', summary: 'Progress and problems of an import', query: emptyQuery,
      response: { status: 200, description: 'The import', schema: importResponse },
      handler: async ({ rc, params }) => ok({ import: await getImport(rc, params.group, params.import) }),
    },
  ];
}
