import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MCP_SERVERS, type McpServerKey } from '../../api/operation.js';
import { customerOperations, operatorOperations } from '../../api/operations.js';
import { buildManifest, emptyServerNote, operationsOf, toolOperations } from '../../api/mcp/tools.js';

// Every server filled (issue 27, point 5): each MCP server serves the tools of the REST tags the
// contract maps to it, and a server whose family the contract does not describe serves none and
// says so. The tables below are transcribed from the contract (Endpoints > MCP transport), not
// read from the registry, so a tool put on the wrong server, a family left off its server or a
// new tag nobody placed fails here.

/** The servers the contract lists (Endpoints > MCP transport, "Servers (key, path /mcp/v1/<key>)"), in its order. */
const CONTRACT_SERVERS = [
  'ivr',
  'flows',
  'forms',
  'data',
  'approvals',
  'payments',
  'automations',
  'alerts',
  'operations',
  'studio',
  'numbers',
  'groups',
  'agents',
  'orders',
  'shop',
  'tickets',
  'kb',
  'content',
  'calls',
  'routing',
  'meetings',
  'messaging',
  'inbox',
  'comments',
  'posts',
  'contacts',
  'leads',
  'overview',
  'accounts',
  'navigate',
  'account',
];

/**
 * The contract's "REST tag to server map", word for word: "Authentication to account; SMS to
 * messaging; chat-channel messages to messaging and inbox; groups to groups; templates to
 * messaging; Contacts to contacts; Catalogue to shop and orders; Profile and Balance to overview
 * and account; Webhooks to none."
 */
const CONTRACT_MAP: Record<string, readonly McpServerKey[]> = {
  Authentication: ['account'],
  SMS: ['messaging'],
  'chat-channel messages': ['messaging', 'inbox'],
  groups: ['groups'],
  templates: ['messaging'],
  Contacts: ['contacts'],
  Catalogue: ['shop', 'orders'],
  Profile: ['overview', 'account'],
  Balance: ['overview', 'account'],
  Webhooks: [],
};

/** Our tags that are the contract's under another name: its Contacts section holds contact groups; its "groups" are chat-channel groups. */
const CONTRACT_TAG: Record<string, string> = {
  'Chat-channel messages': 'chat-channel messages',
  'Chat-channel groups': 'groups',
  'Contact groups': 'Contacts',
  Templates: 'templates',
};

/**
 * Families the map leaves out, each on the server of its name (issue 27: "payments, data, groups,
 * automations, operations and the families added later to their servers"), and our two choices:
 * the message log (GET /api/v3/messages, SMS and chat together) beside the chat messages on
 * messaging and inbox; operations also on automations, whose subscriptions and schedules run them
 * (the automations family owns operations: docs/architecture.md).
 */
const FAMILY_SERVERS: Record<string, readonly McpServerKey[]> = {
  'Data tables': ['data'],
  Payments: ['payments'],
  Automations: ['automations'],
  Operations: ['operations', 'automations'],
  Shop: ['shop'],
  Messages: ['messaging', 'inbox'],
  // Occasion greetings are bulk SMS under the campaigns permissions: on messaging, beside the campaign (SMS) tools.
  Occasions: ['messaging'],
  // The contract names the leads server and the mcp:leads scope: the Leads family's own.
  Leads: ['leads'],
  // The contract names the posts server and the mcp:posts scope: the Posts family's own.
  Posts: ['posts'],
  // The contract names the flows server: the Flows family's own.
  Flows: ['flows'],
  // The contract names the forms server: the Forms family's own.
  Forms: ['forms'],
};

/** REST-only operations: the five compatibility contact paths, covered by the contact-group tools. */
const REST_ONLY = [
  'delete_contact_compat',
  'list_contacts_compat',
  'search_contact_compat',
  'store_contact_compat',
  'update_contact_compat',
  // Agent tasks take the REST key only (contract: Authentication 1; an MCP credential is a 401 there).
  'engine_cancel_run',
  'engine_decide_tool_call',
  'engine_get_run',
  'engine_list_agent_runs',
  'engine_submit_run',
];

const expectedServers = (tag: string): readonly McpServerKey[] | undefined => CONTRACT_MAP[CONTRACT_TAG[tag] ?? tag] ?? FAMILY_SERVERS[tag];
const sorted = (xs: readonly string[]) => [...xs].sort();

/** Servers some mapped tag sends tools to: each must have at least one. */
const MAPPED = new Set<McpServerKey>([...Object.values(CONTRACT_MAP), ...Object.values(FAMILY_SERVERS)].flat());
/** The contract's servers no tag is mapped to: calls, ivr, meetings, …; each must be empty. */
const UNMAPPED = CONTRACT_SERVERS.filter((k) => !MAPPED.has(k as McpServerKey));

test('the registry serves exactly the 31 servers the contract lists', () => {
  assert.deepEqual([...MCP_SERVERS], CONTRACT_SERVERS);
  assert.equal(new Set(MCP_SERVERS).size, 31);
});

test("each tool is on exactly the servers the contract maps its REST tag to (or its family's own server)", () => {
  const wrong: string[] = [];
  for (const op of toolOperations) {
    const expected = expectedServers(op.tag);
    assert.ok(expected, `${op.name}: its tag "${op.tag}" is in neither the contract's map nor the family table of this test`);
    if (JSON.stringify(sorted(op.mcp!.servers)) !== JSON.stringify(sorted(expected)))
      wrong.push(`${op.name} (${op.tag}) is on ${op.mcp!.servers.join(', ')}; the map says ${expected.join(', ') || 'none'}`);
  }
  assert.deepEqual(wrong, []);
});

test('every account operation is a tool but the five compatibility contact paths and the agent engine; no Webhooks operation is', () => {
  const notTools = customerOperations.filter((op) => !op.mcp).map((op) => op.name);
  assert.deepEqual(sorted(notTools), sorted(REST_ONLY));
  assert.deepEqual(
    toolOperations.map((op) => op.name),
    customerOperations.filter((op) => op.auth === 'rest' && op.mcp).map((op) => op.name),
  );
  // The contract maps Webhooks to no server; operator operations are never tools.
  assert.ok(!toolOperations.some((op) => op.tag === 'Webhooks'));
  assert.ok(!operatorOperations.some((op) => op.mcp), 'operator operations are not MCP tools');
});

test('every server a tag is mapped to has tools; every other server of the contract has none', () => {
  for (const key of MAPPED) {
    // templates is mapped to messaging, which SMS fills: no mapped server depends on a family not yet built.
    assert.ok(operationsOf(key).length >= 1, `/mcp/v1/${key} serves no tool`);
  }
  assert.deepEqual(sorted(UNMAPPED), [
    'accounts',
    'agents',
    'alerts',
    'approvals',
    'calls',
    'comments',
    'content',
    'ivr',
    'kb',
    'meetings',
    'navigate',
    'numbers',
    'routing',
    'studio',
    'tickets',
  ]);
  for (const key of UNMAPPED) assert.deepEqual(operationsOf(key as McpServerKey), [], `/mcp/v1/${key} serves tools of no mapped tag`);
});

test('/api-docs/mcp.json marks each empty server with a note; a served one has its tags and no note', () => {
  const manifest = buildManifest([]);
  const byKey = new Map(manifest.endpoints.filter((e) => e.key).map((e) => [e.key as McpServerKey, e as Record<string, unknown>]));
  for (const key of UNMAPPED as McpServerKey[]) {
    const entry = byKey.get(key)!;
    assert.deepEqual(entry.tools, [], key);
    assert.deepEqual(entry.tags, [], key);
    assert.match(String(entry.note), /^No tools: the contract /, key);
    assert.equal(entry.note, emptyServerNote(key));
  }
  // Families the contract only names (paths and fields not shown) are told apart from those it does not describe.
  assert.match(emptyServerNote('agents')!, /names the Agent tasks family, served under \/api\/engine .* but shows no MCP operations/);
  assert.match(emptyServerNote('calls')!, /does not describe its family/);
  for (const key of MAPPED) {
    const entry = byKey.get(key)!;
    assert.equal('note' in entry, false, key);
    assert.equal(emptyServerNote(key), undefined, key);
    const tags = entry.tags as string[];
    assert.ok(tags.length >= 1, key);
    for (const tag of tags) assert.ok(expectedServers(tag)!.includes(key), `${key} serves ${tag}`);
  }
  assert.deepEqual(sorted(byKey.get('shop')!.tags as string[]), ['Catalogue', 'Shop']);
  assert.deepEqual(byKey.get('orders')!.tags, ['Catalogue']);
  assert.deepEqual(sorted(byKey.get('account')!.tags as string[]), ['Authentication', 'Balance', 'Profile']);
});
