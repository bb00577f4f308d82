// The oauth family's words and pure rules (the MCP authorization server).
export * from './scopes.js';
export * from './resources.js';
export * from './registration.js';
