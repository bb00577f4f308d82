// The account family as other families and the doors see it.
export * from './profile.js';
export { createAccount, createApiKey, createUser } from './accounts.js';
export { addIdentity, updateIdentity, listIdentities, deleteIdentity, type IdentityKind } from './identities.js';
