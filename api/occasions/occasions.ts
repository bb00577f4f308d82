import { HINTS, defineOperation } from '../operation.js';
import { noInput } from '../../services/platform/storable.js';
import { campaignSchema } from '../../services/campaigns/index.js';
import { actingForAccount } from '../../services/account/index.js';
import {
  defaultsBody,
  defaultsSchema,
  getOccasion,
  getOccasionDefaults,
  listOccasions,
  occasionBody,
  occasionListQuery,
  occasionListSchema,
  occasionSchema,
  resetOccasion,
  saveOccasion,
  sendOccasionNow,
  updateOccasionDefaults,
} from '../../services/occasions/index.js';

// Occasion greetings (Endpoints > Leads, templates, forms, flows, posts, occasions; docs/occasions.md):
// cards of the catalogue and the account's own, storing only overrides; switching one on schedules
// its greeting, sent as an SMS campaign. Reads need communications.campaigns.view on a live issuer,
// writes communications.campaigns.manage (Authentication 4): a legacy key is refused. The tools are
// on the MCP messaging server, beside the campaign tools.

const O = '/api/v3/occasions';
const VIEW = 'communications.campaigns.view';
const MANAGE = 'communications.campaigns.manage';
const base = { tag: 'Occasions', auth: 'rest', issuerRequired: true } as const;
const tools = { servers: ['messaging'], scope: 'mcp:messaging' } as const;
const card = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: occasionSchema }) as const;

const KEY = 'The occasion key: birthday, a holiday of the workspace’s country (christmas-day, union-day, …) or the account’s own.';

export const occasionOperations = [
  defineOperation({
    ...base,
    name: 'list_occasions',
    method: 'GET',
    path: O,
    permission: VIEW,
    summary: 'List occasion cards: the catalogue’s (birthday, the country’s public holidays) and the account’s own',
    description:
      'Each card shows its values with overrides (what the account stored), inherited (the fields that fell through to the ' +
      'workspace defaults or the catalogue) and inherited_from. The holidays are those of the workspace’s country (occasions/defaults).',
    query: occasionListQuery,
    output: { kind: 'list', status: 200, description: 'The cards', schema: occasionListSchema },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listOccasions(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_occasion_defaults',
    method: 'GET',
    path: `${O}/defaults`,
    permission: VIEW,
    summary: 'Read the workspace defaults every occasion card falls back to',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The workspace defaults', schema: defaultsSchema },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }) => getOccasionDefaults(rc),
  }),
  defineOperation({
    ...base,
    name: 'update_occasion_defaults',
    method: 'PATCH',
    path: `${O}/defaults`,
    permission: MANAGE,
    summary: 'Change the workspace defaults: country, time zone, message, send time, sender, groups',
    description:
      'The fields sent change; null goes back to the built-in value. Every scheduled greeting follows at once (a time zone or send ' +
      'time moves its schedule; a holiday the new country does not have loses its schedule).',
    body: defaultsBody,
    output: { kind: 'resource', status: 200, description: 'The workspace defaults', schema: defaultsSchema },
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, body) => updateOccasionDefaults(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'get_occasion',
    method: 'GET',
    path: `${O}/{key}`,
    permission: VIEW,
    summary: 'Read one occasion card',
    description: KEY,
    query: noInput,
    output: card(200, 'The card'),
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { key }) => getOccasion(rc, key),
  }),
  defineOperation({
    ...base,
    name: 'set_occasion',
    method: 'PUT',
    path: `${O}/{key}`,
    permission: MANAGE,
    summary: 'Set a card’s overrides (all of them), or create the account’s own occasion',
    description:
      `${KEY} The body is the card’s whole set of overrides: a field left out inherits. enabled true schedules the greeting on ` +
      'its day (a contact date: every day, to that day’s matches) at send_time in the workspace’s time zone. A key the catalogue ' +
      'does not hold makes a custom occasion: kind, name, and date (holiday) or date_field (contact_date) are then required.',
    body: occasionBody,
    output: card(200, 'The card'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, { key, ...body }) => saveOccasion(rc, deps, key, body, true),
  }),
  defineOperation({
    ...base,
    name: 'update_occasion',
    method: 'PATCH',
    path: `${O}/{key}`,
    permission: MANAGE,
    summary: 'Change some of a card’s overrides; null inherits again',
    description: `${KEY} Switch a greeting on or off with {"enabled": true|false}.`,
    body: occasionBody,
    output: card(200, 'The card'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, { key, ...body }) => saveOccasion(rc, deps, key, body, false),
  }),
  defineOperation({
    ...base,
    name: 'reset_occasion',
    method: 'DELETE',
    path: `${O}/{key}`,
    permission: MANAGE,
    summary: 'Reset a card to its defaults (forget its overrides); the account’s own occasion is removed',
    description: `${KEY} A catalogue card goes back to the defaults, switched off, so its schedule is removed.`,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Reset',
      schema: {
        type: 'object',
        required: ['key', 'reset', 'custom'],
        properties: {
          key: { type: 'string' },
          reset: { const: true },
          custom: { type: 'boolean', description: 'true: the account’s own occasion, now gone' },
        },
      },
    },
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.remove },
    handler: async ({ rc, deps }, { key }) => resetOccasion(rc, deps, key),
  }),
  defineOperation({
    ...base,
    name: 'send_occasion',
    method: 'POST',
    path: `${O}/{key}/send`,
    permission: MANAGE,
    summary: 'Send an occasion’s greeting now, as an SMS campaign',
    description:
      `${KEY} A contact date greets today’s matches; a holiday greets its next day (today’s, or the coming one early), so its ` +
      'schedule sends nothing more that day. The campaign is read like any other (GET /campaign/{uid}/view) and follows the ' +
      'campaign rules: blacklisted numbers are not sent to, a wallet that cannot cover a page pauses it, one message per number. ' +
      'On or off, the card is sent.',
    body: { type: 'object', additionalProperties: false, properties: {} },
    refusals: { 409: 'The greeting of that day went out already (reason already_sent), or the occasion has no day to come (no_date)' },
    output: { kind: 'resource', status: 201, description: 'The greeting’s campaign', schema: campaignSchema },
    mcp: { ...tools, elevation: 'mcp:send', annotations: HINTS.send },
    handler: async ({ rc, deps }, { key }) => sendOccasionNow(rc, deps, key),
  }),
];

/** The operator's reads of an account's occasions (the same answers as the account's own). */
export const occasionSettingsOperations = [
  defineOperation({
    tag: 'Occasions (operator)',
    auth: 'operator',
    name: 'admin_list_occasions',
    method: 'GET',
    path: '/admin/v1/accounts/{account}/occasions',
    summary: 'List an account’s occasion cards and their schedules',
    description: 'The answer of list_occasions for that account.',
    query: occasionListQuery,
    output: { kind: 'list', status: 200, description: 'The cards', schema: occasionListSchema },
    cli: [{ command: 'occasions:list' }],
    handler: async ({ oc }, { account, ...query }) => listOccasions(await actingForAccount(oc, account), query),
  }),
];
