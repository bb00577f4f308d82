// What every chat-group door shares: the MCP exposure and the permissions (Authentication: group permissions).
export const groupTools = { servers: ['groups'], scope: 'mcp:groups' } as const;
export const groupWriteTools = { ...groupTools, elevation: 'mcp:write' } as const;
export const groupSendTools = { ...groupTools, elevation: 'mcp:send' } as const;
export const groupDeleteTools = { ...groupTools, elevation: 'mcp:delete' } as const;
export const GROUPS_VIEW = 'communications.groups.view';
export const GROUPS_MANAGE = 'communications.groups.manage';
export const SEND = 'communications.send';
/** Group endpoints check the key's issuer (keys with no recorded issuer are refused). */
export const groupBase = { tag: 'Chat-channel groups', auth: 'rest', issuerRequired: true } as const;
