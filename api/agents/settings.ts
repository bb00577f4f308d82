import { defineOperation, MCP_SERVERS, type Operation } from '../operation.js';
import { deletedSchema, listSchema } from '../answers.js';
import { accountRef } from '../../services/account/index.js';
import { ELEVATION_SCOPES } from '../../domain/oauth/index.js';
import {
  changeProfile,
  createProfile,
  getEngineSettings,
  listProfiles,
  putEngineSettings,
  removeProfile,
} from '../../services/agents/settings.js';
import { operatorCancel, operatorDecision, operatorRuns } from '../../services/agents/runs.js';
import { profileSchema, runSchema, settingsSchema } from '../../services/agents/views.js';
import { cancelRunShape, decisionBody, runsListSchema, runsQuery } from './engine.js';

// The operator's interface of the agents family (docs/agents.md): per account the engine switch and
// API availability, the agent profiles, and the account's runs (approve, deny, cancel).
const A = '/admin/v1/accounts/{account}';
const base = { tag: 'Settings (operator)', auth: 'operator' } as const;

const agentName = { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]{0,63}$', description: 'The agent’s name in paths: a slug' } as const;
const profileFields = {
  instructions: { type: 'string', minLength: 1, maxLength: 20_000, description: 'The system instructions of every run' },
  model: { type: 'string', minLength: 1, maxLength: 100, description: 'The model name; the service’s MODEL_NAME when absent' },
  mcp_servers: {
    type: 'array',
    minItems: 1,
    maxItems: MCP_SERVERS.length,
    items: { enum: MCP_SERVERS },
    description: 'The MCP servers whose tools the agent may use',
  },
  tools: {
    type: 'array',
    maxItems: 200,
    items: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    description: 'Tool names it may use among those servers’ tools; empty or absent: all of them',
  },
  preapproved: {
    type: 'array',
    items: { enum: ELEVATION_SCOPES },
    description: 'Elevations (mcp:send, mcp:delete…) whose tools run without a person’s approval',
  },
  max_steps: { type: 'integer', minimum: 1, maximum: 500, description: 'Model turns and tool calls a run may take (default 20)' },
  max_seconds: { type: 'integer', minimum: 1, maximum: 86_400, description: 'How long a run may take (default 600)' },
  token_budget: { type: ['integer', 'null'], minimum: 1, description: 'Model tokens the agent may spend over all its runs; null: none' },
  api_enabled: { type: 'boolean', description: 'Whether the agent may be run over the REST API (default true)' },
} as const;

export const agentSettingsOperations: readonly Operation[] = [
  defineOperation({
    ...base,
    name: 'admin_get_agent_engine',
    method: 'GET',
    path: `${A}/agent-engine`,
    summary: "The account's agent engine switch and API availability",
    output: { kind: 'resource', status: 200, description: 'The engine settings', schema: settingsSchema },
    cli: [{ command: 'agents:engine' }],
    handler: async ({ oc }, { account }) => getEngineSettings(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_put_agent_engine',
    method: 'PUT',
    path: `${A}/agent-engine`,
    summary: 'Switch the agent engine, and its availability over the API, on or off',
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { engine_enabled: { type: 'boolean' }, api_enabled: { type: 'boolean' } },
    } as const,
    output: { kind: 'resource', status: 200, description: 'The engine settings', schema: settingsSchema },
    cli: [
      { command: 'agents:engine-set', help: 'e.g. --engine-enabled true --api-enabled true' },
      { command: 'agents:engine-on', help: 'Engine on and available over the API', fixed: { engine_enabled: true, api_enabled: true } },
      { command: 'agents:engine-off', help: 'No agent runs in the account', fixed: { engine_enabled: false } },
    ],
    handler: async ({ oc }, { account, ...v }) => putEngineSettings(oc, await accountRef(oc, account), v),
  }),
  defineOperation({
    ...base,
    name: 'admin_create_agent',
    method: 'POST',
    path: `${A}/agents`,
    summary: 'Set up an agent: its instructions, model, tools and limits',
    refusals: { 409: 'An agent with this name already exists in the account' },
    body: {
      type: 'object',
      required: ['name', 'instructions', 'mcp_servers'],
      additionalProperties: false,
      properties: { name: agentName, ...profileFields },
      examples: [
        {
          name: 'reminders',
          instructions: 'You send payment reminders to customers whose basket expired.',
          mcp_servers: ['messaging', 'contacts'],
          preapproved: [],
          max_steps: 20,
          max_seconds: 600,
        },
      ],
    } as const,
    output: { kind: 'resource', status: 201, description: 'The agent', schema: profileSchema },
    cli: [{ command: 'agents:create', help: `e.g. --name reminders --instructions '…' --mcp-servers '["messaging"]'` }],
    handler: async ({ oc, deps }, { account, ...profile }) => createProfile(oc, deps.config, await accountRef(oc, account), profile),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_agents',
    method: 'GET',
    path: `${A}/agents`,
    summary: "The account's agents",
    output: { kind: 'list', status: 200, description: 'The agents by name', schema: listSchema(profileSchema) },
    cli: [{ command: 'agents:list' }],
    handler: async ({ oc }, { account }) => listProfiles(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_agent',
    method: 'PATCH',
    path: `${A}/agents/{agent}`,
    summary: 'Change an agent (its next runs; a running run keeps what it started with)',
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: profileFields } as const,
    output: { kind: 'resource', status: 200, description: 'The agent', schema: profileSchema },
    cli: [{ command: 'agents:update' }],
    handler: async ({ oc }, { account, agent, ...change }) => changeProfile(oc, await accountRef(oc, account), agent, change),
  }),
  defineOperation({
    ...base,
    name: 'admin_delete_agent',
    method: 'DELETE',
    path: `${A}/agents/{agent}`,
    summary: 'Delete an agent (its runs stay readable)',
    output: { kind: 'outcome', status: 200, description: 'Deleted', schema: deletedSchema() },
    cli: [{ command: 'agents:delete' }],
    handler: async ({ oc }, { account, agent }) => removeProfile(oc, await accountRef(oc, account), agent),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_agent_runs',
    method: 'GET',
    path: `${A}/agent-runs`,
    summary: "The account's agent runs, newest first",
    query: runsQuery,
    output: { kind: 'list', status: 200, description: 'A page of runs', schema: runsListSchema },
    cli: [{ command: 'agents:runs' }],
    handler: async ({ oc }, { account, ...q }) => operatorRuns(oc, await accountRef(oc, account), q),
  }),
  defineOperation({
    ...base,
    name: 'admin_decide_agent_tool_call',
    method: 'POST',
    path: `${A}/agent-runs/{run}/approval`,
    summary: 'Approve or deny the tool call a run waits on',
    refusals: { 409: 'The run is not waiting for a decision on this call' },
    body: decisionBody,
    output: { kind: 'resource', status: 200, description: 'The run after the decision', schema: runSchema },
    cli: [
      { command: 'agents:approve', help: 'Approve a pending tool call (--run, --call-id)', fixed: { decision: 'approve' } },
      { command: 'agents:deny', help: 'Deny a pending tool call (--run, --call-id)', fixed: { decision: 'deny' } },
    ],
    handler: async ({ oc, deps }, { account, run, ...d }) => operatorDecision(oc, deps, await accountRef(oc, account), run, d),
  }),
  defineOperation({
    ...base,
    name: 'admin_cancel_agent_run',
    method: 'POST',
    path: `${A}/agent-runs/{run}/cancel`,
    ...cancelRunShape,
    cli: [{ command: 'agents:cancel' }],
    handler: async ({ oc, deps }, { account, run }) => operatorCancel(oc, deps, await accountRef(oc, account), run),
  }),
];
