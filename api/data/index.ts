// What every data door shares: the MCP exposure, the permissions and the native envelope.
export const dataTools = { servers: ['data'], scope: 'mcp:data' } as const;
export const dataWriteTools = { ...dataTools, elevation: 'mcp:write' } as const;
export const dataDeleteTools = { ...dataTools, elevation: 'mcp:delete' } as const;
export const DATA_VIEW = 'data.view';
export const DATA_EDIT = 'data.records.edit';
/** Data endpoints: the issuer's permissions apply (keys with no issuer are refused), errors in the data envelope. */
export const dataBase = { tag: 'Data tables', auth: 'rest', issuerRequired: true, envelope: 'data' } as const;
