import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { noInput } from '../../services/platform/storable.js';
import {
  createTemplate,
  deleteTemplate,
  deployTemplate,
  getTemplate,
  listTemplates,
  refreshTemplate,
  syncTemplates,
  templateCreateBody,
  templateDeploymentBody,
  templateListQuery,
  templateSchema,
  templateSyncBody,
  templateSyncSchema,
} from '../../services/templates/index.js';

// Chat-channel message templates (Endpoints > Leads, templates, forms, flows, posts, occasions;
// docs/templates.md). Reads need communications.templates.view on the key's live issuer, writes
// communications.templates.manage (Authentication 4: a key with no recorded issuer is refused). The
// contract maps templates to the MCP messaging server.

const T = '/api/v3/whatsapp/templates';
const VIEW = 'communications.templates.view';
const MANAGE = 'communications.templates.manage';
const base = { tag: 'Templates', auth: 'rest', issuerRequired: true } as const;
const tools = { servers: ['messaging'], scope: 'mcp:messaging' } as const;
const one = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: templateSchema }) as const;
const ID = 'The template’s numeric id; another account’s is not found.';

export const templateOperations = [
  defineOperation({
    ...base,
    name: 'create_message_template',
    method: 'POST',
    path: T,
    permission: MANAGE,
    summary: 'Create a message template and submit it for review',
    description:
      'One name in one language on one WhatsApp business account (business_account_id; absent: the account’s first). The ' +
      'components are the Cloud API’s message_templates shape (HEADER, BODY, FOOTER, BUTTONS, with an example for every ' +
      'placeholder) and are checked first: a problem is 422 and nothing is kept. The template is submitted to the provider in ' +
      'the same request: 201 with its status (pending while in review; approved or rejected when the provider decides at ' +
      'once; submitting when the provider has not answered within 15 s). A provider refusal is 422 (reason provider_refused) ' +
      'and nothing is kept. The review’s answer comes as template.status_changed; GET and refresh read it.',
    body: templateCreateBody,
    refusals: { 409: 'the business account has a template of that name in that language already (reason template_exists)' },
    output: one(201, 'The template, submitted'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => createTemplate(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'list_message_templates',
    method: 'GET',
    path: T,
    permission: VIEW,
    summary: 'List message templates, newest first',
    description: 'Filters: status, name, language, category, business_account_id. Page-number pagination: default 20, at most 100.',
    query: templateListQuery,
    output: { kind: 'list', status: 200, description: 'A page of templates', schema: pageSchema('templates', templateSchema) },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listTemplates(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'sync_message_templates',
    method: 'POST',
    path: `${T}/sync`,
    permission: MANAGE,
    summary: 'Import the provider’s approved templates',
    description:
      'Every approved template of the business account (business_account_id; absent: each of the account’s) is imported ' +
      '(source synced) or, when we have it, brought up to date (a status change emits template.status_changed). Templates ' +
      'the provider does not list as approved are left as they are. A provider refusal is 502.',
    body: templateSyncBody,
    refusals: { 502: 'the chat provider refused the listing' },
    output: { kind: 'outcome', status: 200, description: 'What was imported', schema: templateSyncSchema },
    mcp: { ...tools, elevation: 'mcp:write', annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => syncTemplates(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'get_message_template',
    method: 'GET',
    path: `${T}/{id}`,
    permission: VIEW,
    summary: 'Read a message template and its review status',
    description: ID,
    query: noInput,
    output: one(200, 'The template'),
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id }) => getTemplate(rc, id),
  }),
  defineOperation({
    ...base,
    name: 'refresh_message_template',
    method: 'POST',
    path: `${T}/{id}/refresh`,
    permission: MANAGE,
    summary: 'Ask the provider for a template’s status now',
    description:
      `${ID} A change is stored and emits template.status_changed, as the provider’s webhook would; a template the provider ` +
      'no longer has becomes deleted. A provider refusal is 502.',
    body: { type: 'object', additionalProperties: false, properties: {} },
    refusals: { 502: 'the chat provider refused the read' },
    output: one(200, 'The template'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { id }) => refreshTemplate(rc, deps, id),
  }),
  defineOperation({
    ...base,
    name: 'deploy_message_template',
    method: 'POST',
    path: `${T}/{id}/deployments`,
    permission: MANAGE,
    summary: 'Submit an approved template to another business account of the account',
    description:
      `${ID} A copy (same name, language, category and components; source deployed, deployed_from this one) is made on ` +
      'business_account_id, another WhatsApp business account of the same account, and submitted for review there like a ' +
      'new template. Only an approved template is deployed (409 otherwise); a business account that is not the account’s is 422.',
    body: templateDeploymentBody,
    refusals: { 409: 'the template is not approved (template_not_approved), or the target has it already (template_exists)' },
    output: one(201, 'The copy, submitted'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, { id, ...body }) => deployTemplate(rc, deps, id, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_message_template',
    method: 'DELETE',
    path: `${T}/{id}`,
    permission: MANAGE,
    summary: 'Delete a message template at the provider and here',
    description: `${ID} This translation only (the provider’s hsm_id); its name cannot be reused at the provider for a while. A provider refusal is 502.`,
    query: noInput,
    refusals: { 502: 'the chat provider refused the deletion' },
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Deleted',
      schema: {
        type: 'object',
        required: ['id', 'deleted', 'pending'],
        properties: {
          id: { type: 'integer' },
          deleted: { const: true },
          pending: {
            type: 'boolean',
            description: 'true: the provider had not answered within 15 s; the deletion completes in the background',
          },
        },
      },
    },
    mcp: { ...tools, elevation: 'mcp:delete', annotations: { ...HINTS.remove, openWorldHint: true } },
    handler: async ({ rc, deps }, { id }) => deleteTemplate(rc, deps, id),
  }),
];
