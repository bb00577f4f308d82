import { defineOperation } from '../operation.js';
import { listSchema } from '../answers.js';
import { MCP_SCOPES, PASSWORD_MAX, PASSWORD_MIN } from '../../domain/oauth/index.js';
import { numericId } from '../../services/platform/ids.js';
import { accountRef } from '../../services/account/index.js';
// Not the family's index: that loads oidc-provider (its adapter), which every admin CLI command would then load too.
import { DEFAULT_INVITE_HOURS, inviteUser, setUserPassword } from '../../services/oauth/invites.js';
import { listConnections, revokeConnection } from '../../services/oauth/connections.js';

// The operator's side of people's sign-in (the MCP authorization server's consent needs a person
// who signs in): an invitation link for a user to set their password, or a password the operator
// sets; and the account's MCP connections (OAuth grants and svc_mcp_ credentials in one list),
// each of which the operator can end. Authenticated by the operator token; each is an admin CLI command.

const A = '/admin/v1/accounts';
const base = { tag: 'Settings (operator)', auth: 'operator' } as const;

const inviteSchema = {
  type: 'object',
  required: ['user_id', 'account_id', 'url', 'expires_at'],
  properties: {
    user_id: { type: 'integer' },
    account_id: { type: 'integer' },
    url: {
      type: 'string',
      description: 'The invitation link: open it to set the password (once, before it expires). Shown in this answer only.',
    },
    expires_at: { type: 'string', format: 'date-time' },
  },
} as const;

const passwordSetSchema = {
  type: 'object',
  required: ['user_id', 'account_id', 'password_set_at'],
  properties: {
    user_id: { type: 'integer' },
    account_id: { type: 'integer' },
    password_set_at: { type: 'string', format: 'date-time' },
  },
} as const;

const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const connectionSchema = {
  type: 'object',
  required: ['id', 'kind', 'name', 'client_id', 'person', 'scopes', 'resources', 'created_at', 'last_used_at', 'expires_at'],
  properties: {
    id: {
      type: 'string',
      description: 'oauth_<grant id> for an OAuth connection, credential_<key id> for an svc_mcp_ credential: what revoking names',
    },
    kind: { enum: ['oauth', 'svc_mcp'], description: 'An app a person allowed (OAuth), or an svc_mcp_ credential an operator issued' },
    name: { type: 'string', description: 'The app’s registered name (its client id when it gave none), or the credential’s name' },
    client_id: { type: ['string', 'null'], description: 'The OAuth client; null for a credential' },
    person: {
      type: ['object', 'null'],
      description: 'Who it acts as (who consented, or who the credential was issued for), with their current permissions',
      required: ['id', 'name', 'email', 'active'],
      properties: { id: { type: 'integer' }, name: { type: 'string' }, email: { type: 'string' }, active: { type: 'boolean' } },
    },
    scopes: {
      type: 'array',
      items: { enum: [...MCP_SCOPES] },
      description:
        'The scopes granted (an svc_mcp_ credential implies every one); what is used is also bounded by the person’s permissions',
    },
    resources: {
      type: ['array', 'null'],
      items: { type: 'string' },
      description: 'The MCP endpoints its tokens open; null for a credential (every endpoint)',
    },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { ...nullableDateTime, description: 'The last request it opened, to the minute; null when never (or not known)' },
    expires_at: {
      ...nullableDateTime,
      description: 'OAuth: when its last token (refresh or access) expires unless renewed; a credential: its expiry, null for none',
    },
  },
} as const;

export const oauthSettingsOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_mcp_connections',
    method: 'GET',
    path: `${A}/{account}/mcp-connections`,
    summary: 'List the account’s MCP connections (OAuth apps and svc_mcp_ credentials)',
    description:
      'Every live MCP connection of the account, newest first: the OAuth grants people made by allowing an app on the consent page ' +
      '(while one of their tokens is live) and the svc_mcp_ credentials that are neither revoked nor expired.',
    output: { kind: 'list', status: 200, description: 'The live MCP connections', schema: listSchema(connectionSchema) },
    cli: [{ command: 'mcp-connections:list' }],
    handler: async ({ oc }, { account }) => listConnections(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_revoke_mcp_connection',
    method: 'DELETE',
    path: `${A}/{account}/mcp-connections/{connection}`,
    summary: 'End an MCP connection (permanent)',
    description:
      'An OAuth connection loses its grant and every access and refresh token issued under it; an svc_mcp_ credential is revoked. ' +
      'Either is refused from the next request on (401).',
    refusals: { 404: 'The account has no live connection by that id' },
    output: { kind: 'resource', status: 200, description: 'The connection as it was', schema: connectionSchema },
    cli: [{ command: 'mcp-connections:revoke' }],
    handler: async ({ oc }, { account, connection }) => revokeConnection(oc, await accountRef(oc, account), connection),
  }),
  defineOperation({
    ...base,
    name: 'admin_invite_user',
    method: 'POST',
    path: `${A}/{account}/users/{user}/invite`,
    summary: 'Invite a user to set their password (a one-time link)',
    description:
      'The link lets the person set the password they sign in with when an AI assistant asks to connect to the account ' +
      '(the consent page of the MCP authorization server). It works once, until it expires; a new invitation ends the earlier ones.',
    refusals: { 403: 'The user is deactivated' },
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        expires_in_hours: {
          type: 'integer',
          minimum: 1,
          maximum: 168,
          default: DEFAULT_INVITE_HOURS,
          description: 'How long the link works',
        },
      },
    } as const,
    output: { kind: 'outcome', status: 201, description: 'The invitation link, shown once', schema: inviteSchema },
    secretInAnswer: true,
    cli: [{ command: 'users:invite', flags: { hours: 'expires_in_hours' } }],
    handler: async ({ oc, deps }, { account, user, expires_in_hours }) =>
      inviteUser(
        oc,
        deps.config.publicBaseUrl,
        await accountRef(oc, account),
        numericId(user, 'User'),
        expires_in_hours ?? DEFAULT_INVITE_HOURS,
      ),
  }),
  defineOperation({
    ...base,
    name: 'admin_set_user_password',
    method: 'PUT',
    path: `${A}/{account}/users/{user}/password`,
    summary: 'Set a user’s password',
    description:
      'Sets the password the person signs in with on the MCP authorization server’s pages. An invitation (users:invite) lets them choose it themselves.',
    body: {
      type: 'object',
      required: ['password'],
      additionalProperties: false,
      properties: { password: { type: 'string', minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX, writeOnly: true } },
    } as const,
    output: { kind: 'outcome', status: 200, description: 'When the password was set', schema: passwordSetSchema },
    cli: [{ command: 'users:password' }],
    handler: async ({ oc }, { account, user, password }) =>
      setUserPassword(oc, await accountRef(oc, account), numericId(user, 'User'), password),
  }),
];
