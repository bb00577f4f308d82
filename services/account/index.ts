// The account family as other families and the doors see it.
export * from './profile.js';
export { createAccount, createApiKey, createUser, accountForContext } from './accounts.js';
export { requireAccount, accountRef, actingForAccount } from './settings.js';
// The svc_mcp_ credentials among an account's MCP connections (services/oauth/connections.ts).
export { listKeys, revokeKey } from './settings.js';
export { debitSegments, debitSql } from './wallet.js';
// A key and its issuer as they stand now (an agent run's tool calls apply them at each call).
export { issuedKey } from './store.js';
export { recordNotice, recordNotices, type NoticeInput } from './notices.js';
// What other families read of an account, instead of naming `accounts` in their statements.
export { accountStatus, accountCurrency, accountCountry, accountStatusSql, accountCurrencySql, userIdsOf } from './store.js';
// The people of an account as the MCP authorization server reads them (sign-in, consent, its tokens' subject).
export { personById, peopleWithEmail, type PersonRow } from './store.js';
// The person an OAuth token names, admitted inside the oauth family's token statement (findAccessTokenHolder).
export { PERSON_CREDENTIAL_SQL, PERSON_CREDENTIAL_COLUMNS, personCredentialParams, type PersonCredentialRow } from './store.js';
