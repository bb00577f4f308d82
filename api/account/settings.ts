import { defineOperation, type Operation } from '../operation.js';
import { deletedSchema, listSchema } from '../answers.js';
import { PERMISSIONS } from '../../domain/account/permissions.js';
import { DATA_GRANT_PATTERN } from '../../domain/data/index.js';
import { numericId } from '../../services/platform/ids.js';
import { storableObject } from '../../services/platform/storable.js';
import {
  listAccounts,
  openAccount,
  getAccount,
  updateAccount,
  listUsers,
  addUser,
  updateUser,
  issueKey,
  listKeys,
  revokeKey,
  type KeyKind,
} from '../../services/account/settings.js';
import { listIdentities, addIdentity, updateIdentity, removeIdentity, type IdentityKind } from '../../services/messaging/index.js';
import { accountRef } from '../../services/account/index.js';

// The operator interface ("Settings" in the contract): accounts, users, keys, MCP credentials,
// sender identities, routes and blacklists. Authenticated by the operator token, never by an
// account key; each operation is also an admin CLI command (scripts/admin.ts).

const A = '/admin/v1/accounts';
const base = { tag: 'Settings (operator)', auth: 'operator' } as const;

// ---- Schemas -----------------------------------------------------------------------------------

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;
const nullableId = { type: ['integer', 'null'] } as const;
const phone = { type: 'string', pattern: '^\\+?[0-9][0-9 ()-]{5,24}$' } as const;
const currency = { type: 'string', pattern: '^[A-Za-z]{3}$', description: 'ISO 4217 code; stored upper case' } as const;
const billingMode = { enum: ['prepaid', 'postpaid'] } as const;
const permissionList = {
  type: 'array',
  // data.grants.<name>: grants an operator names for data tables (visibility, writes, masks, status moves).
  items: {
    anyOf: [
      { enum: [...PERMISSIONS, '*', 'forms.*', 'leads.*', 'contacts.*', 'data.*', 'data.grants.*', 'posts.*'] },
      { type: 'string', pattern: DATA_GRANT_PATTERN },
    ],
  },
  uniqueItems: true,
} as const;

const accountSchema = {
  type: 'object',
  required: ['id', 'uid', 'name', 'status', 'wallet_balance', 'currency', 'billing_mode'],
  properties: {
    id: { type: 'integer' },
    uid: { type: 'string' },
    name: { type: 'string' },
    status: { enum: ['active', 'suspended'] },
    wallet_balance: { type: 'string', description: 'Decimal string, e.g. "50.0000"' },
    currency: { type: 'string' },
    billing_mode: billingMode,
    country: {
      type: ['string', 'null'],
      description: 'ISO 3166-1 alpha-2: the default region of a national phone number (a lead’s 0754 123 456); null: none',
    },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;
const userSchema = {
  type: 'object',
  required: ['id', 'account_id', 'email', 'name', 'permissions', 'active'],
  properties: {
    id: { type: 'integer' },
    account_id: { type: 'integer' },
    email: { type: 'string' },
    name: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string' } },
    active: { type: 'boolean' },
    created_at: dateTime,
    updated_at: dateTime,
  },
} as const;
const keySchema = {
  type: 'object',
  required: ['id', 'account_id', 'kind', 'name', 'hint'],
  properties: {
    id: { type: 'integer' },
    account_id: { type: 'integer' },
    user_id: nullableId,
    kind: { enum: ['rest', 'mcp'] },
    name: { type: 'string' },
    hint: { type: 'string', description: 'First and last four characters of the secret' },
    expires_at: nullableDateTime,
    revoked_at: nullableDateTime,
    last_used_at: nullableDateTime,
    created_at: dateTime,
  },
} as const;
const issuedKeySchema = {
  ...keySchema,
  required: [...keySchema.required, 'token'],
  properties: { ...keySchema.properties, token: { type: 'string', description: 'The secret: shown in this answer only' } },
} as const;
const identityRow = <const P extends object>(properties: P) =>
  ({
    type: 'object',
    required: ['id', 'account_id'],
    properties: { id: { type: 'integer' }, account_id: { type: 'integer' }, ...properties, created_at: dateTime },
  }) as const;

const accountFields = {
  name: { type: 'string', minLength: 1, maxLength: 160 },
  status: { enum: ['active', 'suspended'] },
  // The column is numeric(16,4): twelve digits before the point.
  wallet_balance: { type: 'number', minimum: -999_999_999_999, maximum: 999_999_999_999 },
  currency,
  billing_mode: billingMode,
  country: {
    type: ['string', 'null'],
    pattern: '^[A-Za-z]{2}$',
    description: 'ISO 3166-1 alpha-2 (TZ, KE, GB…), stored upper case; null clears it. Leads read national phone numbers in it',
  },
} as const;

const keyBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 160 },
    user_id: { type: ['integer', 'null'], description: 'The issuing user: the key acts with their current permissions' },
    expires_at: nullableDateTime,
  },
} as const;
/** An MCP credential is a connection its person made, and acts as that person (api/mcp/tools.ts toolPermissionOf): its issuer is required. */
const mcpCredentialBody = {
  ...keyBody,
  required: ['name', 'user_id'],
  properties: {
    ...keyBody.properties,
    user_id: {
      type: 'integer',
      description: 'The issuing user: the credential acts with their current permissions, and not at all once they are deactivated',
    },
  },
} as const;

const senderIdFields = {
  channel_id: nullableId,
  approval_status: { enum: ['pending', 'approved', 'rejected'] },
} as const;
const phoneNumberFields = {
  channel_id: nullableId,
  capabilities: { type: 'array', items: { enum: ['sms', 'mms', 'whatsapp', 'voice'] }, uniqueItems: true },
  released: { type: 'boolean' },
  provider_phone_number_id: { type: ['string', 'null'], maxLength: 64 },
  business_account_id: { type: ['string', 'null'], maxLength: 64 },
} as const;
const shortCodeFields = { channel_id: nullableId, assignment_status: { enum: ['active', 'inactive'] } } as const;
const channelFields = {
  code: { type: 'string', minLength: 1, maxLength: 64 },
  is_default: { type: 'boolean', description: 'The default route of its type; replaces the previous default' },
  active: { type: 'boolean' },
  // Free-form provider settings, stated as storable JSON: a key or text with a NUL at any depth is
  // refused by the server, and the schema now says so at every depth, not only at the top.
  config: storableObject,
} as const;

// ---- Accounts and users ------------------------------------------------------------------------

const accountOperations = [
  defineOperation({
    ...base,
    name: 'admin_list_accounts',
    method: 'GET',
    path: A,
    summary: 'List accounts',
    output: { kind: 'list', status: 200, description: 'Every account', schema: listSchema(accountSchema) },
    cli: [{ command: 'accounts:list' }],
    handler: async ({ oc }) => listAccounts(oc),
  }),
  defineOperation({
    ...base,
    name: 'admin_create_account',
    method: 'POST',
    path: A,
    summary: 'Create an account',
    body: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: accountFields.name, currency, billing_mode: billingMode, wallet_balance: accountFields.wallet_balance },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The account', schema: accountSchema },
    cli: [{ command: 'accounts:create', flags: { balance: 'wallet_balance' } }],
    handler: async ({ oc }, input) => openAccount(oc, input),
  }),
  defineOperation({
    ...base,
    name: 'admin_get_account',
    method: 'GET',
    path: `${A}/{account}`,
    summary: 'Read an account',
    output: { kind: 'resource', status: 200, description: 'The account', schema: accountSchema },
    cli: [{ command: 'accounts:show' }],
    handler: async ({ oc }, { account }) => getAccount(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_account',
    method: 'PATCH',
    path: `${A}/{account}`,
    summary: 'Rename, suspend or reactivate an account; set wallet balance, currency, billing mode and country',
    body: { type: 'object', additionalProperties: false, minProperties: 1, properties: accountFields } as const,
    output: { kind: 'resource', status: 200, description: 'The account', schema: accountSchema },
    cli: [
      { command: 'accounts:suspend', help: 'Suspend an account: its keys are refused (403)', fixed: { status: 'suspended' }, fields: [] },
      { command: 'accounts:activate', help: 'Reactivate a suspended account', fixed: { status: 'active' }, fields: [] },
      {
        command: 'wallet:set',
        help: 'Set the wallet balance, currency and billing mode',
        fields: ['wallet_balance', 'currency', 'billing_mode'],
        flags: { balance: 'wallet_balance' },
      },
      {
        command: 'accounts:country',
        help: 'Set the account’s country (ISO 3166-1 alpha-2): the region of national phone numbers',
        fields: ['country'],
      },
    ],
    handler: async ({ oc }, { account, ...changes }) => updateAccount(oc, await accountRef(oc, account), changes),
  }),
  defineOperation({
    ...base,
    name: 'admin_list_users',
    method: 'GET',
    path: `${A}/{account}/users`,
    summary: 'List users',
    output: { kind: 'list', status: 200, description: 'The users of the account', schema: listSchema(userSchema) },
    cli: [{ command: 'users:list' }],
    handler: async ({ oc }, { account }) => listUsers(oc, await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_create_user',
    method: 'POST',
    path: `${A}/{account}/users`,
    summary: 'Create a user with permissions',
    refusals: { 409: 'A user with this email already exists in the account' },
    body: {
      type: 'object',
      required: ['email', 'name'],
      additionalProperties: false,
      properties: {
        email: { type: 'string', format: 'email', maxLength: 254 },
        name: { type: 'string', minLength: 1, maxLength: 160 },
        permissions: permissionList,
      },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The user', schema: userSchema },
    cli: [{ command: 'users:create' }],
    handler: async ({ oc }, { account, ...user }) => addUser(oc, await accountRef(oc, account), user),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_user',
    method: 'PATCH',
    path: `${A}/{account}/users/{user}`,
    summary: 'Change permissions, rename, deactivate or reactivate a user',
    body: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      properties: { name: { type: 'string', minLength: 1, maxLength: 160 }, active: { type: 'boolean' }, permissions: permissionList },
    } as const,
    output: { kind: 'resource', status: 200, description: 'The user', schema: userSchema },
    cli: [
      {
        command: 'users:deactivate',
        help: 'Deactivate a user: keys they issued are refused where an issuer is needed',
        fixed: { active: false },
        fields: [],
      },
      { command: 'users:activate', help: 'Reactivate a user', fixed: { active: true }, fields: [] },
      { command: 'users:permissions', help: 'Replace the permissions (comma list)', fields: ['permissions'] },
    ],
    handler: async ({ oc }, { account, user, ...changes }) =>
      updateUser(oc, await accountRef(oc, account), numericId(user, 'User'), changes),
  }),
];

// ---- Keys and MCP credentials ------------------------------------------------------------------

function keyOperations(kind: KeyKind, path: `${typeof A}/{account}/${'keys' | 'mcp-credentials'}`, cli: 'keys' | 'mcp') {
  const what = kind === 'rest' ? 'API key' : 'MCP credential';
  const noun = kind === 'rest' ? 'api_key' : 'mcp_credential';
  return [
    defineOperation({
      ...base,
      name: `admin_create_${noun}`,
      method: 'POST',
      path,
      summary:
        kind === 'rest' ? 'Create an API key (the secret is shown once)' : 'Create an MCP connection credential (svc_mcp_…, shown once)',
      body: kind === 'rest' ? keyBody : mcpCredentialBody,
      output: { kind: 'resource', status: 201, description: `The ${what} with its secret`, schema: issuedKeySchema },
      secretInAnswer: true,
      cli: [{ command: `${cli}:create`, flags: { user: 'user_id' } }],
      handler: async ({ oc }, { account, ...key }) => issueKey(oc, await accountRef(oc, account), kind, key),
    }),
    defineOperation({
      ...base,
      name: `admin_list_${noun}s`,
      method: 'GET',
      path,
      summary: kind === 'rest' ? 'List API keys' : 'List MCP credentials',
      output: { kind: 'list', status: 200, description: `The ${what}s, secrets hidden`, schema: listSchema(keySchema) },
      cli: [{ command: `${cli}:list` }],
      handler: async ({ oc }, { account }) => listKeys(oc, await accountRef(oc, account), kind),
    }),
    defineOperation({
      ...base,
      name: `admin_revoke_${noun}`,
      method: 'DELETE',
      path: `${path}/{key}`,
      summary: 'Revoke (permanent)',
      output: { kind: 'resource', status: 200, description: `The revoked ${what}`, schema: keySchema },
      cli: [{ command: `${cli}:revoke` }],
      handler: async ({ oc }, { account, key }) => revokeKey(oc, await accountRef(oc, account), kind, numericId(key, 'Key')),
    }),
  ];
}

// ---- Sending identities, routes and the blacklist ----------------------------------------------

/**
 * What a kind's list states besides its answer: each kind's answer and handler are written where the
 * kind is named, so its row's type is checked against its own schema.
 */
function identityList<K extends IdentityKind>(kind: K, noun: string, many: string, cli: string) {
  return {
    ...base,
    name: `admin_list_${noun}s`,
    method: 'GET',
    path: `${A}/{account}/${kind}`,
    summary: `List the account's ${many}`,
    cli: [{ command: `${cli}:list` }],
  } as const;
}
const listed = (many: string) => ({ kind: 'list', status: 200, description: `The account's ${many}` }) as const;

/** Removal is the same for every kind; add and change follow each kind's schema below. */
function identityRemove(kind: IdentityKind, noun: string, one: string, cli: string) {
  return defineOperation({
    ...base,
    name: `admin_remove_${noun}`,
    method: 'DELETE',
    path: `${A}/{account}/${kind}/{id}`,
    summary: `Remove a ${one}`,
    output: { kind: 'outcome', status: 200, description: 'Removed', schema: deletedSchema() },
    cli: [{ command: `${cli}:remove` }],
    handler: async ({ oc }, { account, id }) => removeIdentity(oc, kind, await accountRef(oc, account), numericId(id)),
  });
}

const senderIdSchema = identityRow({ value: { type: 'string' }, ...senderIdFields });
const phoneNumberSchema = identityRow({ number: { type: 'string' }, ...phoneNumberFields });
const shortCodeSchema = identityRow({ code: { type: 'string' }, ...shortCodeFields });
const channelSchema = identityRow({
  channel_type: { enum: ['sms', 'whatsapp'] },
  provider: { type: 'string' },
  ...channelFields,
  config: { type: ['object', 'null'] },
});
const blacklistSchema = identityRow({ phone: { type: 'string' }, channel_id: nullableId });

const S = `${A}/{account}/sender-ids` as const;
const N = `${A}/{account}/phone-numbers` as const;
const C = `${A}/{account}/short-codes` as const;
const H = `${A}/{account}/channels` as const;
const B = `${A}/{account}/blacklist` as const;

const identityOperations = [
  defineOperation({
    ...identityList('sender-ids', 'sender_id', 'sender ids', 'senders'),
    output: { ...listed('sender ids'), schema: listSchema(senderIdSchema) },
    handler: async ({ oc }, { account }) => listIdentities(oc, 'sender-ids', await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_add_sender_id',
    method: 'POST',
    path: S,
    summary: 'Add an alphanumeric sender id',
    body: {
      type: 'object',
      required: ['value'],
      additionalProperties: false,
      properties: { value: { type: 'string', pattern: '^[A-Za-z0-9 ._-]{1,11}$' }, ...senderIdFields },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The sender id', schema: senderIdSchema },
    cli: [{ command: 'senders:add', flags: { status: 'approval_status', channel: 'channel_id' } }],
    handler: async ({ oc }, { account, ...fields }) => addIdentity(oc, 'sender-ids', await accountRef(oc, account), fields),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_sender_id',
    method: 'PATCH',
    path: `${S}/{id}`,
    summary: 'Approve, reject or re-route a sender id',
    body: { type: 'object', additionalProperties: false, properties: senderIdFields } as const,
    output: { kind: 'resource', status: 200, description: 'The sender id', schema: senderIdSchema },
    cli: [
      { command: 'senders:approve', help: 'Approve a sender id', fixed: { approval_status: 'approved' }, fields: [] },
      { command: 'senders:update', flags: { status: 'approval_status', channel: 'channel_id' } },
    ],
    handler: async ({ oc }, { account, id, ...fields }) =>
      updateIdentity(oc, 'sender-ids', await accountRef(oc, account), numericId(id), fields),
  }),
  identityRemove('sender-ids', 'sender_id', 'sender id', 'senders'),
  defineOperation({
    ...identityList('phone-numbers', 'phone_number', 'phone numbers', 'numbers'),
    output: { ...listed('phone numbers'), schema: listSchema(phoneNumberSchema) },
    handler: async ({ oc }, { account }) => listIdentities(oc, 'phone-numbers', await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_add_phone_number',
    method: 'POST',
    path: N,
    summary: 'Add a phone number (kept as +digits)',
    body: {
      type: 'object',
      required: ['number', 'capabilities'],
      additionalProperties: false,
      properties: { number: phone, ...phoneNumberFields },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The phone number', schema: phoneNumberSchema },
    cli: [
      {
        command: 'numbers:add',
        flags: { 'phone-number-id': 'provider_phone_number_id', waba: 'business_account_id', channel: 'channel_id' },
      },
    ],
    handler: async ({ oc }, { account, ...fields }) => addIdentity(oc, 'phone-numbers', await accountRef(oc, account), fields),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_phone_number',
    method: 'PATCH',
    path: `${N}/{id}`,
    summary: 'Change capabilities, route or provider ids of a number; release it',
    body: { type: 'object', additionalProperties: false, properties: phoneNumberFields } as const,
    output: { kind: 'resource', status: 200, description: 'The phone number', schema: phoneNumberSchema },
    cli: [
      { command: 'numbers:release', help: 'Release a number', fixed: { released: true }, fields: [] },
      {
        command: 'numbers:update',
        flags: { 'phone-number-id': 'provider_phone_number_id', waba: 'business_account_id', channel: 'channel_id' },
      },
    ],
    handler: async ({ oc }, { account, id, ...fields }) =>
      updateIdentity(oc, 'phone-numbers', await accountRef(oc, account), numericId(id), fields),
  }),
  identityRemove('phone-numbers', 'phone_number', 'phone number', 'numbers'),
  defineOperation({
    ...identityList('short-codes', 'short_code', 'short codes', 'short-codes'),
    output: { ...listed('short codes'), schema: listSchema(shortCodeSchema) },
    handler: async ({ oc }, { account }) => listIdentities(oc, 'short-codes', await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_add_short_code',
    method: 'POST',
    path: C,
    summary: 'Assign a short code',
    body: {
      type: 'object',
      required: ['code'],
      additionalProperties: false,
      properties: { code: { type: 'string', pattern: '^[0-9]{3,8}$' }, ...shortCodeFields },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The short code', schema: shortCodeSchema },
    cli: [{ command: 'short-codes:add', flags: { status: 'assignment_status', channel: 'channel_id' } }],
    handler: async ({ oc }, { account, ...fields }) => addIdentity(oc, 'short-codes', await accountRef(oc, account), fields),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_short_code',
    method: 'PATCH',
    path: `${C}/{id}`,
    summary: 'Activate, deactivate or re-route a short code',
    body: { type: 'object', additionalProperties: false, properties: shortCodeFields } as const,
    output: { kind: 'resource', status: 200, description: 'The short code', schema: shortCodeSchema },
    cli: [{ command: 'short-codes:update', flags: { status: 'assignment_status', channel: 'channel_id' } }],
    handler: async ({ oc }, { account, id, ...fields }) =>
      updateIdentity(oc, 'short-codes', await accountRef(oc, account), numericId(id), fields),
  }),
  identityRemove('short-codes', 'short_code', 'short code', 'short-codes'),
  defineOperation({
    ...identityList('channels', 'channel', 'channels', 'channels'),
    output: { ...listed('channels'), schema: listSchema(channelSchema) },
    handler: async ({ oc }, { account }) => listIdentities(oc, 'channels', await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_add_channel',
    method: 'POST',
    path: H,
    summary: 'Add a route (channel) of the account',
    body: {
      type: 'object',
      required: ['channel_type', 'code'],
      additionalProperties: false,
      properties: {
        channel_type: { enum: ['sms', 'whatsapp'] },
        provider: { enum: ['sms-gateway', 'whatsapp-cloud'], description: 'Defaults to the provider of the channel type' },
        ...channelFields,
      },
    } as const,
    output: { kind: 'resource', status: 201, description: 'The channel', schema: channelSchema },
    cli: [{ command: 'channels:add', flags: { type: 'channel_type', default: 'is_default' } }],
    handler: async ({ oc }, { account, ...fields }) => addIdentity(oc, 'channels', await accountRef(oc, account), fields),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_channel',
    method: 'PATCH',
    path: `${H}/{id}`,
    summary: 'Rename, activate, deactivate or reconfigure a channel; make it the default',
    body: { type: 'object', additionalProperties: false, properties: channelFields } as const,
    output: { kind: 'resource', status: 200, description: 'The channel', schema: channelSchema },
    cli: [{ command: 'channels:update', flags: { default: 'is_default' } }],
    handler: async ({ oc }, { account, id, ...fields }) =>
      updateIdentity(oc, 'channels', await accountRef(oc, account), numericId(id), fields),
  }),
  identityRemove('channels', 'channel', 'channel', 'channels'),
  defineOperation({
    ...identityList('blacklist', 'blacklist_entry', 'blacklist entries', 'blacklist'),
    output: { ...listed('blacklist entries'), schema: listSchema(blacklistSchema) },
    handler: async ({ oc }, { account }) => listIdentities(oc, 'blacklist', await accountRef(oc, account)),
  }),
  defineOperation({
    ...base,
    name: 'admin_add_blacklist_entry',
    method: 'POST',
    path: B,
    summary: 'Blacklist a number (kept as +digits)',
    body: { type: 'object', required: ['phone'], additionalProperties: false, properties: { phone, channel_id: nullableId } } as const,
    output: { kind: 'resource', status: 201, description: 'The entry', schema: blacklistSchema },
    cli: [{ command: 'blacklist:add', flags: { channel: 'channel_id' } }],
    handler: async ({ oc }, { account, ...fields }) => addIdentity(oc, 'blacklist', await accountRef(oc, account), fields),
  }),
  defineOperation({
    ...base,
    name: 'admin_update_blacklist_entry',
    method: 'PATCH',
    path: `${B}/{id}`,
    summary: 'Limit a blacklist entry to one channel, or widen it to all (null)',
    body: { type: 'object', additionalProperties: false, properties: { channel_id: nullableId } } as const,
    output: { kind: 'resource', status: 200, description: 'The entry', schema: blacklistSchema },
    cli: [{ command: 'blacklist:update', flags: { channel: 'channel_id' } }],
    handler: async ({ oc }, { account, id, ...fields }) =>
      updateIdentity(oc, 'blacklist', await accountRef(oc, account), numericId(id), fields),
  }),
  identityRemove('blacklist', 'blacklist_entry', 'blacklist entry', 'blacklist'),
];

/** The account family's operator operations, fixed paths before `{param}` ones. */
export const accountSettingsOperations: readonly Operation[] = [
  ...accountOperations,
  ...keyOperations('rest', `${A}/{account}/keys`, 'keys'),
  ...keyOperations('mcp', `${A}/{account}/mcp-credentials`, 'mcp'),
  ...identityOperations,
];
