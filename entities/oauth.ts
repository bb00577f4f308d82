import { defineEntity, p } from '@mikro-orm/core';
import { createdAt, timestamps } from './columns.js';

// The MCP authorization server (docs/security.md, "OAuth for MCP"): what oidc-provider stores
// (registered clients, sign-in sessions, interactions, grants, codes, access and refresh tokens) and
// the passwords and invitation links people sign in with.

/**
 * One stored object of the authorization server, keyed by its kind and the SHA-256 of its id: a code
 * or token is never kept in clear, not even inside `payload` (services/oauth/adapter.ts takes the id
 * out, and puts it back from the value presented). The other columns are read out of the payload so
 * that what the provider asks by (a grant's objects, a session's uid) and what an operator lists
 * (an account's grants) are found by index.
 */
export const OAuthRecord = defineEntity({
  name: 'OAuthRecord',
  tableName: 'oauth_records',
  properties: {
    /** oidc-provider's model: Client, Session, Interaction, Grant, AuthorizationCode, AccessToken, RefreshToken, … */
    model: p.string().length(40).primary(),
    idHash: p.string().length(64).primary(),
    payload: p.json<Record<string, unknown>>(),
    grantId: p.string().length(64).nullable(),
    /** A session's uid, hashed (the provider finds a session by it). */
    uidHash: p.string().length(64).nullable(),
    /** A client id: an opaque id from registration, or an https URL (a client id metadata document). */
    clientId: p.text().nullable(),
    /** The person the object belongs to (its subject `<account>.<user>`, domain/oauth/resources.ts). */
    accountId: p.integer().nullable(),
    userId: p.integer().nullable(),
    expiresAt: p.datetime().nullable(),
    /** A code or refresh token used once; a second use revokes its grant (reuse detection). */
    consumedAt: p.datetime().nullable(),
    /** A grant's: when one of its access tokens last opened an MCP endpoint (written at most once a minute); what an operator lists. */
    lastUsedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  indexes: [
    {
      name: 'oauth_records_grant_index',
      expression: `create index "oauth_records_grant_index" on "oauth_records" ("grant_id") where "grant_id" is not null`,
    },
    {
      name: 'oauth_records_uid_index',
      expression: `create index "oauth_records_uid_index" on "oauth_records" ("model", "uid_hash") where "uid_hash" is not null`,
    },
    { name: 'oauth_records_account_index', properties: ['accountId', 'model'] },
    { name: 'oauth_records_expires_index', properties: ['expiresAt'] },
  ],
});

/** A person's password (scrypt, services/oauth/passwords.ts): one per user row, set through an invitation or by the operator. */
export const UserPassword = defineEntity({
  name: 'UserPassword',
  tableName: 'user_passwords',
  properties: {
    userId: p.integer().primary().autoincrement(false),
    accountId: p.integer(),
    /** `scrypt$<N>$<r>$<p>$<salt>$<hash>`, base64url: the cost travels with the hash, so it can be raised later. */
    passwordHash: p.string().length(255),
    ...timestamps(),
  },
});

/** An invitation link the operator made for a person to set their password: used once, before it expires; only its hash is kept. */
export const UserInvite = defineEntity({
  name: 'UserInvite',
  tableName: 'user_invites',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    userId: p.integer().index(),
    tokenHash: p.string().length(64).unique(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    createdAt: createdAt(),
  },
});
