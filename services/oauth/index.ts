// The oauth family (the MCP authorization server) as the doors see it.
export { postgresAdapter } from './adapter.js';
export { peopleSigningIn, setPassword, hashPassword, verifyPassword, SCRYPT_COST } from './passwords.js';
export { inviteUser, setUserPassword, invitedPerson, acceptInvite, INVITE_PATH, DEFAULT_INVITE_HOURS } from './invites.js';
export { touchGrantLastUsed, findAccessTokenHolder, type AccessTokenHolderRow } from './store.js';
export { listConnections, revokeConnection, type McpConnection } from './connections.js';
