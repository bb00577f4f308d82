import { HINTS, defineOperation } from '../operation.js';
import { noInput } from '../../services/platform/storable.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { actingForAccount } from '../../services/account/index.js';
import {
  bundleSchema,
  endBody,
  endSession,
  exportFlow,
  exportQuery,
  flowListQuery,
  flowSchema,
  getFlow,
  getSession,
  listFlows,
  listSessionSteps,
  listSessions,
  loadBody,
  loadFlow,
  publishBody,
  publishFlow,
  sessionListQuery,
  sessionSchema,
  startBody,
  startSession,
  stepSchema,
} from '../../services/flows/index.js';

// Flows (Endpoints > Leads, templates, forms, flows, posts, occasions: "read flows, publish a draft,
// export a bundle, list and end sessions, start one for a customer"; docs/flows.md). Paths and
// fields follow Twilio Studio (Flows, Executions as sessions, Steps). The graph is never edited
// here: the operator loads a definition (admin_load_flow, `npm run admin -- flows:load`).
// Permissions: the contract names none for flows; every path needs a key with a live issuer (an
// endpoint added since 7 September 2026), and what makes the service message customers (publishing
// a draft, starting a session) or stops a conversation (ending one) needs communications.send.
// The tools are on the MCP `flows` server under mcp:builders ("Forms, flows and templates").

const F = '/api/v3/flows';
const S = `${F}/{id}/sessions`;
const SEND = 'communications.send';
const base = { tag: 'Flows', auth: 'rest', issuerRequired: true } as const;
const tools = { servers: ['flows'], scope: 'mcp:builders' } as const;
const FLOW_ID = 'The flow’s numeric id; another account’s is not found.';
const SESSION_ID = 'The session’s uid (FN…); another flow’s or another account’s is not found.';
const flow = (description: string) => ({ kind: 'resource', status: 200, description, schema: flowSchema }) as const;
const session = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: sessionSchema }) as const;

export const flowOperations = [
  defineOperation({
    ...base,
    name: 'list_flows',
    method: 'GET',
    path: F,
    summary: 'List flows, newest first',
    description: 'Without their definitions (read one flow for them). Filter: status. Page-number pagination: default 20, at most 100.',
    query: flowListQuery,
    output: { kind: 'list', status: 200, description: 'A page of flows', schema: pageSchema('flows', flowSchema) },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, q) => listFlows(rc, q),
  }),
  defineOperation({
    ...base,
    name: 'get_flow',
    method: 'GET',
    path: `${F}/{id}`,
    summary: 'Read a flow: its draft and its published revision',
    description: FLOW_ID,
    query: noInput,
    output: flow('The flow'),
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id }) => getFlow(rc, id),
  }),
  defineOperation({
    ...base,
    name: 'publish_flow',
    method: 'POST',
    path: `${F}/{id}/publish`,
    permission: SEND,
    summary: 'Publish a flow’s draft',
    description:
      `${FLOW_ID} The draft becomes the published revision: sessions started from now on walk it, running ones keep the ` +
      'revision they started on. revision (optional) is the draft the caller reviewed: a draft loaded since is 409 ' +
      '(revision_moved). Publishing what is published changes nothing.',
    body: publishBody,
    refusals: { 409: 'the draft moved past the revision given (revision_moved)' },
    output: flow('The flow, published'),
    mcp: { ...tools, elevation: 'mcp:publish', annotations: HINTS.update },
    handler: async ({ rc }, { id, ...body }) => publishFlow(rc, id, body),
  }),
  defineOperation({
    ...base,
    name: 'export_flow',
    method: 'GET',
    path: `${F}/{id}/export`,
    summary: 'Export a flow as a bundle another account can load',
    description:
      `${FLOW_ID} A versioned JSON document (format svc.flow-bundle, version 1): the name, the revision, the commit ` +
      'message, the definition and its sha256 checksum. revision=published (the default when there is one) or draft. ' +
      'An operator loads it elsewhere with admin_load_flow {bundle} (flows:load --bundle).',
    query: exportQuery,
    refusals: { 409: 'revision=published on a flow never published (flow_not_published)' },
    output: { kind: 'outcome', status: 200, description: 'The bundle', schema: bundleSchema },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id, ...q }) => exportFlow(rc, id, q),
  }),
  defineOperation({
    ...base,
    name: 'list_flow_sessions',
    method: 'GET',
    path: S,
    summary: 'List a flow’s sessions (Studio’s executions), newest first',
    description: `${FLOW_ID} Filters: status (active, ended), customer. Page-number pagination: default 20, at most 100.`,
    query: sessionListQuery,
    output: { kind: 'list', status: 200, description: 'A page of sessions', schema: pageSchema('sessions', sessionSchema) },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id, ...q }) => listSessions(rc, id, q),
  }),
  defineOperation({
    ...base,
    name: 'start_flow_session',
    method: 'POST',
    path: S,
    permission: SEND,
    summary: 'Start a session of the flow for a customer',
    description:
      `${FLOW_ID} The published revision is walked for the customer (to) from the account’s WhatsApp number (sender_id; ` +
      'absent: the first), with parameters read as {{flow.data.*}}. Answers once the session is recorded (201, active); ' +
      'flow.session.started is emitted. A customer has one live session in an account (a chat reply cannot say which flow ' +
      'it answers): another is 409 session_active naming it. A flow never published is 409 flow_not_published.',
    body: startBody,
    refusals: { 409: 'the customer has a live session (session_active), or the flow is not published (flow_not_published)' },
    output: session(201, 'The session, active'),
    mcp: { ...tools, elevation: 'mcp:send', annotations: HINTS.send },
    handler: async ({ rc, deps }, { id, ...body }) => startSession(rc, deps, id, body),
  }),
  defineOperation({
    ...base,
    name: 'get_flow_session',
    method: 'GET',
    path: `${S}/{session}`,
    summary: 'Read a session: where it is, or how it ended',
    description: `${FLOW_ID} ${SESSION_ID}`,
    query: noInput,
    output: session(200, 'The session'),
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id, session: uid }) => getSession(rc, id, uid),
  }),
  defineOperation({
    ...base,
    name: 'list_flow_session_steps',
    method: 'GET',
    path: `${S}/{session}/steps`,
    summary: 'List the steps a session went through',
    description: `${FLOW_ID} ${SESSION_ID} In order: the state, its type, the event it left by, the next state and what it did.`,
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'The steps',
      schema: { type: 'object', required: ['steps'], properties: { steps: { type: 'array', items: stepSchema } } },
    },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { id, session: uid }) => listSessionSteps(rc, id, uid),
  }),
  defineOperation({
    ...base,
    name: 'end_flow_session',
    method: 'POST',
    path: `${S}/{session}/end`,
    permission: SEND,
    summary: 'End a live session now',
    description:
      `${FLOW_ID} ${SESSION_ID} Studio’s Status=ended: the session stops at once, a wait for a reply included, and ` +
      'flow.session.ended is emitted with end_reason ended. A session that has ended is 409 session_ended.',
    body: endBody,
    refusals: { 409: 'the session has ended (session_ended)' },
    output: session(200, 'The session, ended'),
    mcp: { ...tools, elevation: 'mcp:automate', annotations: HINTS.update },
    handler: async ({ rc, deps }, { id, session: uid }) => endSession(rc, deps, id, uid),
  }),
];

export const flowSettingsOperations = [
  defineOperation({
    tag: 'Flows (operator)',
    auth: 'operator',
    name: 'admin_load_flow',
    method: 'POST',
    path: '/admin/v1/accounts/{account}/flows',
    summary: 'Load a flow definition (or a bundle) into an account as a new draft',
    description:
      'name and definition, or bundle (an export, its checksum checked). A new name makes a flow at revision 1; a known ' +
      'name makes its next draft revision (what is published stays until the business publishes). The definition is ' +
      'checked strictly (unknown state types or properties, transitions on events a type lacks, dangling transitions, ' +
      'unreachable states, loops that never wait for a reply, more than 200 states): 422 naming each problem, nothing written.',
    body: loadBody,
    bodyLimitBytes: 600 * 1024,
    output: { kind: 'resource', status: 201, description: 'The flow, its draft loaded', schema: flowSchema },
    cli: [{ command: 'flows:load', help: 'Load a flow definition (JSON) or a bundle into an account as a new draft' }],
    handler: async ({ oc }, { account, ...body }) => loadFlow(await actingForAccount(oc, account), body),
  }),
];
