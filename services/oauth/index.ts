// The oauth family (the MCP authorization server) as the doors see it.
export { postgresAdapter } from './adapter.js';
