// The MCP scopes of the contract (Authentication 7): capability scopes say which part of the
// business, elevation scopes say how far and cross every capability granted, and every token
// carries mcp:use. The consent page lists them in this order, with the words a person reads.

export const BASE_SCOPE = 'mcp:use';

export const CAPABILITY_SCOPES = [
  'mcp:overview',
  'mcp:calls',
  'mcp:routing',
  'mcp:numbers',
  'mcp:meetings',
  'mcp:builders',
  'mcp:data',
  'mcp:studio',
  'mcp:contacts',
  'mcp:agents',
  'mcp:commerce',
  'mcp:support',
  'mcp:accounts',
  'mcp:approvals',
  'mcp:payments',
  'mcp:automations',
  'mcp:alerts',
  'mcp:operations',
  'mcp:navigate',
  'mcp:messaging',
  'mcp:inbox',
  'mcp:comments',
  'mcp:posts',
  'mcp:leads',
  'mcp:groups',
] as const;

export const ELEVATION_SCOPES = [
  'mcp:publish',
  'mcp:send',
  'mcp:spend',
  'mcp:delete',
  'mcp:write',
  'mcp:shape',
  'mcp:automate',
  'mcp:approve',
] as const;

export type CapabilityScope = (typeof CAPABILITY_SCOPES)[number];
export type ElevationScope = (typeof ELEVATION_SCOPES)[number];
export type McpScope = typeof BASE_SCOPE | CapabilityScope | ElevationScope;

/** "Pre-ticked capabilities on the consent screen" (the contract); elevation scopes never are. */
export const PRE_TICKED_SCOPES: readonly CapabilityScope[] = [
  'mcp:overview',
  'mcp:calls',
  'mcp:contacts',
  'mcp:support',
  'mcp:accounts',
  'mcp:navigate',
];

/** Every scope a token for an MCP resource can carry: what the protected-resource metadata lists. */
export const MCP_SCOPES: readonly McpScope[] = [BASE_SCOPE, ...CAPABILITY_SCOPES, ...ELEVATION_SCOPES];

const ALL = new Set<string>(MCP_SCOPES);
const GRANTABLE = new Set<string>([...CAPABILITY_SCOPES, ...ELEVATION_SCOPES]);

export const isMcpScope = (s: string): s is McpScope => ALL.has(s);

/** What the consent page says of each scope (a title and one line). */
export const SCOPE_WORDS: Readonly<Record<CapabilityScope | ElevationScope, { title: string; line: string }>> = {
  'mcp:overview': { title: 'Overview', line: 'The account profile, balance and notices' },
  'mcp:calls': { title: 'Calls', line: 'Calls and their records' },
  'mcp:routing': { title: 'Routing', line: 'How calls and conversations are routed' },
  'mcp:numbers': { title: 'Numbers', line: 'Phone numbers and sender identities' },
  'mcp:meetings': { title: 'Meetings', line: 'Meetings and their bookings' },
  'mcp:builders': { title: 'Builders', line: 'Forms, flows and templates' },
  'mcp:data': { title: 'Data', line: 'Data tables and their records' },
  'mcp:studio': { title: 'Studio', line: 'Content design' },
  'mcp:contacts': { title: 'Contacts', line: 'Contacts and contact groups' },
  'mcp:agents': { title: 'Agents', line: 'AI agents and their tasks' },
  'mcp:commerce': { title: 'Commerce', line: 'Shops, products, stock, baskets and orders' },
  'mcp:support': { title: 'Support', line: 'Support tickets and the knowledge base' },
  'mcp:accounts': { title: 'Accounts', line: 'Account settings and people' },
  'mcp:approvals': { title: 'Approvals', line: 'Requests waiting for a decision' },
  'mcp:payments': { title: 'Payments', line: 'Payments and refunds' },
  'mcp:automations': { title: 'Automations', line: 'Automations, events and their runs' },
  'mcp:alerts': { title: 'Alerts', line: 'Alerts and their rules' },
  'mcp:operations': { title: 'Operations', line: 'Operations and their runs' },
  'mcp:navigate': { title: 'Navigate', line: 'Find your way around the account' },
  'mcp:messaging': { title: 'Messaging', line: 'SMS and chat messages, templates and campaigns' },
  'mcp:inbox': { title: 'Inbox', line: 'The shared inbox of conversations' },
  'mcp:comments': { title: 'Comments', line: 'Comments on posts' },
  'mcp:posts': { title: 'Posts', line: 'Social posts' },
  'mcp:leads': { title: 'Leads', line: 'Leads and their pipeline' },
  'mcp:groups': { title: 'Groups', line: 'Chat groups and their members' },
  'mcp:publish': { title: 'Publish', line: 'Publish posts, pages and listings' },
  'mcp:send': { title: 'Send', line: 'Send messages to people' },
  'mcp:spend': { title: 'Spend', line: 'Spend money: paid sends, payments, refunds' },
  'mcp:delete': { title: 'Delete', line: 'Delete records' },
  'mcp:write': { title: 'Write', line: 'Create and change records' },
  'mcp:shape': { title: 'Shape', line: 'Change how things are set up: tables, fields, settings' },
  'mcp:automate': { title: 'Automate', line: 'Start, change and stop automations' },
  'mcp:approve': { title: 'Approve', line: 'Approve or reject on your behalf' },
};

/** The words of a scope string (space separated, as OAuth writes it), each once, in order. */
export function scopeWords(scope: string | undefined | null): string[] {
  return [...new Set((scope ?? '').split(' ').filter((s) => s !== ''))];
}

/**
 * The scope an authorization request carries on to the provider: what the client asked for
 * (its non-MCP words, such as offline_access, kept) plus every MCP scope, so the person's ticks on
 * the consent page decide the grant whatever the client named (RFC 6749 section 3.3 lets the
 * resource owner's decision widen or narrow the request), and mcp:use is always there.
 */
export function requestedScopeForConsent(clientScope: string | undefined | null): string {
  return [...new Set([...scopeWords(clientScope), ...MCP_SCOPES])].join(' ');
}

/**
 * A person's ticks read into a grant: only capability and elevation scopes count (anything else
 * sent is ignored), plus mcp:use; `rejected` is every other MCP scope, so the provider records the
 * whole request as decided.
 */
export function grantFromTicks(ticked: readonly string[]): { granted: McpScope[]; rejected: McpScope[] } {
  const chosen = new Set(ticked.filter((s) => GRANTABLE.has(s)));
  const granted: McpScope[] = [BASE_SCOPE, ...MCP_SCOPES.filter((s) => s !== BASE_SCOPE && chosen.has(s))];
  const rejected = MCP_SCOPES.filter((s) => s !== BASE_SCOPE && !chosen.has(s));
  return { granted, rejected };
}

/**
 * What an svc_mcp_ credential implies: every MCP scope. An operator issues it for a person, and it
 * acts with that person's current permissions (api/mcp/tools.ts toolPermissionOf), which bound it
 * as the consenting person's bound an OAuth grant; there is no consent page to narrow it.
 */
export const SVC_MCP_SCOPES: readonly McpScope[] = MCP_SCOPES;

/** The scopes a tool needs: mcp:use, its capability scope, and its elevation scope when it has one. */
export function scopesNeeded(tool: { scope: string; elevation?: string }): string[] {
  return [BASE_SCOPE, tool.scope, ...(tool.elevation ? [tool.elevation] : [])];
}

/**
 * The scopes a tool needs that a grant does not hold, in the order of `scopesNeeded` (empty: the
 * grant covers it). Elevation scopes cross every capability granted, so an elevation alone opens
 * nothing: the capability must be held too.
 */
export function missingScopes(granted: readonly string[], tool: { scope: string; elevation?: string }): string[] {
  const held = new Set(granted);
  return scopesNeeded(tool).filter((s) => !held.has(s));
}
