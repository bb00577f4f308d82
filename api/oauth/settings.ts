import { defineOperation } from '../operation.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../domain/oauth/index.js';
import { numericId } from '../../services/platform/ids.js';
import { accountRef } from '../../services/account/index.js';
// Not the family's index: that loads oidc-provider (its adapter), which every admin CLI command would then load too.
import { DEFAULT_INVITE_HOURS, inviteUser, setUserPassword } from '../../services/oauth/invites.js';

// The operator's side of people's sign-in (the MCP authorization server's consent needs a person
// who signs in): an invitation link for a user to set their password, or a password the operator
// sets. Authenticated by the operator token; each is an admin CLI command.

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

export const oauthSettingsOperations = [
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
