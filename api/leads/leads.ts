import { HINTS, defineOperation } from '../operation.js';
import { deletedSchema } from '../answers.js';
import { noInput } from '../../services/platform/storable.js';
import { actingForAccount } from '../../services/account/index.js';
import {
  activityListQuery,
  activityListSchema,
  activitySchema,
  addLeadLabels,
  addLeadNote,
  assignBody,
  assignLead,
  changeLeadStage,
  deleteLead,
  getLead,
  getLeadSettings,
  labelsBody,
  leadListQuery,
  leadListSchema,
  leadSchema,
  listLeadActivities,
  listLeads,
  mergeBody,
  mergeLeads,
  noteBody,
  operatorSettingsBody,
  readLeadModule,
  removeLeadLabel,
  setLeadModule,
  settingsBody,
  settingsSchema,
  stageBody,
  updateBody,
  updateLead,
  updateLeadSettings,
  upsertBody,
  upsertLead,
  upsertSchema,
} from '../../services/leads/index.js';

// Leads (Endpoints > Leads, templates, forms, flows, posts, occasions; docs/leads.md): an upsert
// that finds the person by phone in any form, e-mail, chat id, conversation or call; the list with
// its filters; reads, changes, stage moves, assignment, labels, notes, merge and delete. Every path
// needs a live issuer holding the leads.* permission named (Authentication 4: a legacy key is
// refused); the module switched off by the operator answers 403 (module_disabled). The tools are
// on the MCP `leads` server under mcp:leads; changes need mcp:write, a delete or a merge mcp:delete.

const L = '/api/v3/leads';
// A request the schemas refuse is 422 with reason invalid, as the service's own refusals of a value are.
const base = { tag: 'Leads', auth: 'rest', issuerRequired: true, invalidReason: 'invalid' } as const;
const tools = { servers: ['leads'], scope: 'mcp:leads' } as const;
const read = { ...tools, annotations: HINTS.read } as const;
const write = { ...tools, elevation: 'mcp:write', annotations: HINTS.write } as const;
const update = { ...tools, elevation: 'mcp:write', annotations: HINTS.update } as const;
const remove = { ...tools, elevation: 'mcp:delete', annotations: HINTS.remove } as const;
const lead = (description: string) => ({ kind: 'resource', status: 200, description, schema: leadSchema }) as const;

const VIEW = 'leads.view';
const EDIT = 'leads.edit';
const STAGE_REFUSALS = {
  409: 'The lead is won and the move gives no reason (reason won_locked)',
} as const;

export const leadOperations = [
  defineOperation({
    ...base,
    name: 'upsert_lead',
    method: 'POST',
    path: L,
    permission: EDIT,
    summary: 'Create or update the lead of a person found by phone (any form), e-mail, chat id, conversation or call',
    description:
      'The person is found by any identity sent: a phone number in any common form (read in country, else the account’s ' +
      'country, when national), an e-mail without case, a chat id, a conversation_id (its customer too) or a call_id. ' +
      'Found: that lead is updated (identities it lacked are added, labels added, a note appended); else a lead is made. ' +
      'Nothing to identify the person: 422 nothing_to_identify. When identities name different leads, the e-mail’s wins ' +
      'and duplicate_ids lists the others. A lead you cannot see (assigned to someone else) is 409. assignee_id needs leads.assign.',
    body: upsertBody,
    refusals: {
      409: 'The person’s lead is assigned to someone else and not visible to this key, or the lead is won and the stage move gives no reason (won_locked)',
    },
    output: { kind: 'resource', status: 200, description: 'The lead, created or updated', schema: upsertSchema },
    mcp: write,
    handler: async ({ rc }, body) => upsertLead(rc, body),
  }),
  defineOperation({
    ...base,
    name: 'list_leads',
    method: 'GET',
    path: L,
    permission: VIEW,
    summary: 'List leads, most recently changed first, by stage, assignee, label or text',
    description: 'Without leads.data.all: the issuer’s leads, the unassigned pool and those the issuer added.',
    query: leadListQuery,
    output: { kind: 'list', status: 200, description: 'A page of leads', schema: leadListSchema },
    mcp: read,
    handler: async ({ rc }, query) => listLeads(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_lead_settings',
    method: 'GET',
    path: `${L}/settings`,
    permission: VIEW,
    summary: 'Read the account’s leads settings (the module switch, what AI assistants may do)',
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    mcp: read,
    handler: async ({ rc }) => getLeadSettings(rc),
  }),
  defineOperation({
    ...base,
    name: 'update_lead_settings',
    method: 'PATCH',
    path: `${L}/settings`,
    permission: 'leads.settings',
    summary: 'Set what AI assistants (MCP connections) may do with leads: write, read or none',
    body: settingsBody,
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    mcp: update,
    handler: async ({ rc }, body) => updateLeadSettings(rc, body),
  }),
  defineOperation({
    ...base,
    name: 'get_lead',
    method: 'GET',
    path: `${L}/{lead}`,
    permission: VIEW,
    summary: 'Read a lead',
    query: noInput,
    output: lead('The lead'),
    mcp: read,
    handler: async ({ rc }, { lead: ref }) => getLead(rc, ref),
  }),
  defineOperation({
    ...base,
    name: 'update_lead',
    method: 'PATCH',
    path: `${L}/{lead}`,
    permission: EDIT,
    summary: 'Change a lead’s fields; a new phone, e-mail or chat id replaces its own',
    description: 'stage with reason follows the stage rules (reason_required, won_locked). fields merge; a key sent as null is removed.',
    body: updateBody,
    refusals: { 409: 'Another lead holds the phone, e-mail or chat id sent; or the lead is won and the move gives no reason (won_locked)' },
    output: lead('The lead'),
    mcp: update,
    handler: async ({ rc }, { lead: ref, ...body }) => updateLead(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_lead',
    method: 'DELETE',
    path: `${L}/{lead}`,
    permission: 'leads.delete',
    summary: 'Delete a lead, its identities and its timeline',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema({ id: { type: 'integer' } }) },
    mcp: remove,
    handler: async ({ rc }, { lead: ref }) => deleteLead(rc, ref),
  }),
  defineOperation({
    ...base,
    name: 'change_lead_stage',
    method: 'POST',
    path: `${L}/{lead}/stage`,
    permission: EDIT,
    summary: 'Move a lead to a stage: new, contacted, qualified, opportunity, won, lost, unqualified',
    description:
      'Moves are free, with two rules: into lost or unqualified needs a reason (422 reason_required); out of won needs a ' +
      'reason (409 won_locked). The same stage changes nothing.',
    body: stageBody,
    refusals: STAGE_REFUSALS,
    output: lead('The lead'),
    mcp: update,
    handler: async ({ rc }, { lead: ref, ...body }) => changeLeadStage(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'assign_lead',
    method: 'POST',
    path: `${L}/{lead}/assign`,
    permission: 'leads.assign',
    summary: 'Assign a lead to a user of the account, or back to the unassigned pool (null)',
    description: 'A user id the account does not have: 422 assignee_unknown.',
    body: assignBody,
    output: lead('The lead'),
    mcp: update,
    handler: async ({ rc }, { lead: ref, ...body }) => assignLead(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'add_lead_labels',
    method: 'POST',
    path: `${L}/{lead}/labels`,
    permission: EDIT,
    summary: 'Add labels to a lead (one the lead has, in any case, is kept once)',
    body: labelsBody,
    output: lead('The lead'),
    mcp: update,
    handler: async ({ rc }, { lead: ref, ...body }) => addLeadLabels(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'remove_lead_label',
    method: 'DELETE',
    path: `${L}/{lead}/labels/{label}`,
    permission: EDIT,
    summary: 'Remove a label from a lead (matched without case)',
    output: lead('The lead'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.remove },
    handler: async ({ rc }, { lead: ref, label }) => removeLeadLabel(rc, ref, label),
  }),
  defineOperation({
    ...base,
    name: 'add_lead_note',
    method: 'POST',
    path: `${L}/{lead}/notes`,
    permission: EDIT,
    summary: 'Add a note to a lead’s timeline (at most 10,000 characters)',
    body: noteBody,
    output: { kind: 'resource', status: 201, description: 'The note', schema: activitySchema },
    mcp: write,
    handler: async ({ rc }, { lead: ref, ...body }) => addLeadNote(rc, ref, body),
  }),
  defineOperation({
    ...base,
    name: 'list_lead_activities',
    method: 'GET',
    path: `${L}/{lead}/activities`,
    permission: VIEW,
    summary: 'A lead’s timeline, newest first: notes, stage moves, assignments, labels, merges (kind=note: the notes)',
    query: activityListQuery,
    output: { kind: 'list', status: 200, description: 'A page of the timeline', schema: activityListSchema },
    mcp: read,
    handler: async ({ rc }, { lead: ref, ...query }) => listLeadActivities(rc, ref, query),
  }),
  defineOperation({
    ...base,
    name: 'merge_leads',
    method: 'POST',
    path: `${L}/{lead}/merge`,
    permission: EDIT,
    summary: 'Merge another lead (lead_id) into this one; the other is deleted',
    description:
      'This lead keeps its values and stage; the other’s identities, timeline and labels move here and its values fill ' +
      'what this one lacks. The other’s id then answers 404 and is listed in merged_ids.',
    body: mergeBody,
    output: lead('The lead merged into'),
    mcp: remove,
    handler: async ({ rc }, { lead: ref, ...body }) => mergeLeads(rc, ref, body),
  }),
];

/** The operator's switch of an account's leads module. */
export const leadSettingsOperations = [
  defineOperation({
    tag: 'Leads (operator)',
    auth: 'operator',
    name: 'admin_get_lead_settings',
    method: 'GET',
    path: '/admin/v1/accounts/{account}/leads/settings',
    summary: 'Read an account’s leads settings',
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    cli: [{ command: 'leads:settings' }],
    handler: async ({ oc }, { account }) => readLeadModule(await actingForAccount(oc, account)),
  }),
  defineOperation({
    tag: 'Leads (operator)',
    auth: 'operator',
    name: 'admin_update_lead_settings',
    method: 'PATCH',
    path: '/admin/v1/accounts/{account}/leads/settings',
    summary: 'Switch an account’s leads module on or off; set what AI assistants may do',
    body: operatorSettingsBody,
    output: { kind: 'resource', status: 200, description: 'The settings', schema: settingsSchema },
    cli: [
      { command: 'leads:enable', help: 'Switch the leads module on', fixed: { enabled: true }, fields: [] },
      { command: 'leads:disable', help: 'Switch the leads module off: every lead path answers 403', fixed: { enabled: false }, fields: [] },
      { command: 'leads:ai', help: 'What AI assistants may do with leads: write, read or none', fields: ['ai_access'] },
    ],
    handler: async ({ oc }, { account, ...body }) => setLeadModule(await actingForAccount(oc, account), body),
  }),
];
