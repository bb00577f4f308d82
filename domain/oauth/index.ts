// The oauth family's words and pure rules (the MCP authorization server, people's sign-in).
export * from './scopes.js';
export * from './resources.js';
export * from './registration.js';
export * from './passwords.js';
