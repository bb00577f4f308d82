import type { AppDeps } from '../http/app.js';
import { successOf, emptyQuery, type RouteDef } from '../http/registry.js';
import { many, one } from '../../entities/db.js';
import { notFound, validationFailed } from '../http/errors.js';
import { PERMISSIONS } from '../../domain/account/permissions.js';
import { createAccount, createApiKey, createUser } from '../../services/account/accounts.js';
import { addIdentity, updateIdentity, listIdentities, deleteIdentity, type IdentityKind } from '../../services/account/identities.js';

// The operator interface ("Settings" in the contract): accounts, users, keys, sender identities,
// routes and blacklists. Authenticated by the operator token, never by an account key.
const A = '/admin/v1/accounts';
const anyObject = { type: 'object' };
const ok = (data: unknown, status = 200) => ({ status, body: { status: 'success', data } });
const accountParam = (p: Record<string, string>) => Number(p.account);

const keyView = (k: Record<string, unknown>) => ({
  id: k.id,
  account_id: k.account_id,
  user_id: k.user_id,
  kind: k.kind,
  name: k.name,
  hint: k.token_hint,
  expires_at: k.expires_at,
  revoked_at: k.revoked_at,
  last_used_at: k.last_used_at ?? null,
  created_at: k.created_at,
});

const permissionList = {
  type: 'array',
  items: { enum: [...PERMISSIONS, '*', 'forms.*', 'leads.*', 'contacts.*', 'data.*', 'posts.*'] },
  uniqueItems: true,
};
const keyBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 160 },
    user_id: { type: ['integer', 'null'] },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
  },
};

const IDENTITY_BODIES: Record<IdentityKind, { create: Record<string, unknown>; update: Record<string, unknown> }> = {
  'sender-ids': {
    create: {
      type: 'object',
      required: ['value'],
      additionalProperties: false,
      properties: {
        value: { type: 'string', pattern: '^[A-Za-z0-9 ._-]{1,11}$' },
        channel_id: { type: ['integer', 'null'] },
        approval_status: { enum: ['pending', 'approved', 'rejected'] },
      },
    },
    update: {
      type: 'object',
      additionalProperties: false,
      properties: { channel_id: { type: ['integer', 'null'] }, approval_status: { enum: ['pending', 'approved', 'rejected'] } },
    },
  },
  'phone-numbers': {
    create: {
      type: 'object',
      required: ['number', 'capabilities'],
      additionalProperties: false,
      properties: {
        number: { type: 'string', pattern: '^\\+?[0-9][0-9 ()-]{5,24}$' },
        channel_id: { type: ['integer', 'null'] },
        capabilities: { type: 'array', items: { enum: ['sms', 'mms', 'whatsapp', 'voice'] }, uniqueItems: true },
        released: { type: 'boolean' },
        provider_phone_number_id: { type: ['string', 'null'], maxLength: 64 },
        business_account_id: { type: ['string', 'null'], maxLength: 64 },
      },
    },
    update: {
      type: 'object',
      additionalProperties: false,
      properties: {
        channel_id: { type: ['integer', 'null'] },
        capabilities: { type: 'array', items: { enum: ['sms', 'mms', 'whatsapp', 'voice'] }, uniqueItems: true },
        released: { type: 'boolean' },
        provider_phone_number_id: { type: ['string', 'null'], maxLength: 64 },
        business_account_id: { type: ['string', 'null'], maxLength: 64 },
      },
    },
  },
  'short-codes': {
    create: {
      type: 'object',
      required: ['code'],
      additionalProperties: false,
      properties: {
        code: { type: 'string', pattern: '^[0-9]{3,8}$' },
        channel_id: { type: ['integer', 'null'] },
        assignment_status: { enum: ['active', 'inactive'] },
      },
    },
    update: {
      type: 'object',
      additionalProperties: false,
      properties: { channel_id: { type: ['integer', 'null'] }, assignment_status: { enum: ['active', 'inactive'] } },
    },
  },
  channels: {
    create: {
      type: 'object',
      required: ['channel_type', 'code'],
      additionalProperties: false,
      properties: {
        channel_type: { enum: ['sms', 'whatsapp'] },
        code: { type: 'string', minLength: 1, maxLength: 64 },
        provider: { enum: ['sms-gateway', 'whatsapp-cloud'] },
        is_default: { type: 'boolean' },
        active: { type: 'boolean' },
        config: { type: 'object' },
      },
    },
    update: {
      type: 'object',
      additionalProperties: false,
      properties: {
        code: { type: 'string', minLength: 1, maxLength: 64 },
        is_default: { type: 'boolean' },
        active: { type: 'boolean' },
        config: { type: 'object' },
      },
    },
  },
  blacklist: {
    create: {
      type: 'object',
      required: ['phone'],
      additionalProperties: false,
      properties: { phone: { type: 'string', pattern: '^\\+?[0-9][0-9 ()-]{5,24}$' }, channel_id: { type: ['integer', 'null'] } },
    },
    update: { type: 'object', additionalProperties: false, properties: { channel_id: { type: ['integer', 'null'] } } },
  },
};

export function adminRoutes(deps: AppDeps): RouteDef[] {
  const em = () => deps.orm.em.fork();
  const accountExists = async (id: number) => {
    if (!Number.isInteger(id) || !(await one(em(), 'select id from accounts where id = ?', [id]))) throw notFound('Account');
  };
  const base = {
    tag: 'Settings (operator)',
    auth: 'operator' as const,
    query: emptyQuery,
    response: { status: 200, description: 'OK', schema: successOf(anyObject) },
  };
  const created = { status: 201, description: 'Created', schema: successOf(anyObject) };

  const routes: RouteDef[] = [
    {
      ...base,
      method: 'GET',
      path: A,
      summary: 'List accounts',
      handler: async () => ok(await many(em(), 'select * from accounts order by id')),
    },
    {
      ...base,
      method: 'POST',
      path: A,
      summary: 'Create an account',
      response: created,
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 160 },
          currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
          billing_mode: { enum: ['prepaid', 'postpaid'] },
          wallet_balance: { type: 'number' },
        },
      },
      handler: async ({ body }) => ok(await createAccount(em(), body), 201),
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/{account}`,
      summary: 'Read an account',
      handler: async ({ params }) => {
        const row = await one(em(), 'select * from accounts where id = ?', [accountParam(params)]);
        if (!row) throw notFound('Account');
        return ok(row);
      },
    },
    {
      ...base,
      method: 'PATCH',
      path: `${A}/{account}`,
      summary: 'Rename, suspend or reactivate an account; set wallet balance, currency and billing mode',
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: {
          name: { type: 'string', minLength: 1, maxLength: 160 },
          status: { enum: ['active', 'suspended'] },
          wallet_balance: { type: 'number' },
          currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
          billing_mode: { enum: ['prepaid', 'postpaid'] },
        },
      },
      handler: async ({ params, body }) => {
        const b = body as Record<string, unknown>;
        if (typeof b.currency === 'string') b.currency = b.currency.toUpperCase();
        if (typeof b.wallet_balance === 'number') b.wallet_balance = String(b.wallet_balance);
        const cols = Object.keys(b);
        const row = await one(
          em(),
          `update accounts set ${cols.map((c) => `${c} = ?`).join(', ')}, updated_at = now() where id = ? returning *`,
          [...cols.map((c) => b[c]), accountParam(params)],
        );
        if (!row) throw notFound('Account');
        return ok(row);
      },
    },
    {
      ...base,
      method: 'GET',
      path: `${A}/{account}/users`,
      summary: 'List users',
      handler: async ({ params }) => {
        await accountExists(accountParam(params));
        return ok(await many(em(), 'select * from users where account_id = ? order by id', [accountParam(params)]));
      },
    },
    {
      ...base,
      method: 'POST',
      path: `${A}/{account}/users`,
      summary: 'Create a user with permissions',
      response: created,
      body: {
        type: 'object',
        required: ['email', 'name'],
        additionalProperties: false,
        properties: {
          email: { type: 'string', format: 'email', maxLength: 254 },
          name: { type: 'string', minLength: 1, maxLength: 160 },
          permissions: permissionList,
        },
      },
      handler: async ({ params, body }) => {
        await accountExists(accountParam(params));
        const exists = await one(em(), 'select id from users where account_id = ? and email = ?', [accountParam(params), body.email]);
        if (exists) throw validationFailed({ email: ['A user with this email already exists in the account.'] });
        return ok(
          await createUser(em(), accountParam(params), { email: body.email, name: body.name, permissions: body.permissions ?? [] }),
          201,
        );
      },
    },
    {
      ...base,
      method: 'PATCH',
      path: `${A}/{account}/users/{user}`,
      summary: 'Change permissions, rename, deactivate or reactivate a user',
      body: {
        type: 'object',
        additionalProperties: false,
        minProperties: 1,
        properties: { name: { type: 'string', minLength: 1, maxLength: 160 }, active: { type: 'boolean' }, permissions: permissionList },
      },
      handler: async ({ params, body }) => {
        const b = { ...(body as Record<string, unknown>) };
        if (b.permissions) b.permissions = JSON.stringify(b.permissions);
        const cols = Object.keys(b);
        const row = await one(
          em(),
          `update users set ${cols.map((c) => `${c} = ?`).join(', ')}, updated_at = now() where id = ? and account_id = ? returning *`,
          [...cols.map((c) => b[c]), Number(params.user), accountParam(params)],
        );
        if (!row) throw notFound('User');
        return ok(row);
      },
    },
  ];

  for (const kind of ['rest', 'mcp'] as const) {
    const path = kind === 'rest' ? `${A}/{account}/keys` : `${A}/{account}/mcp-credentials`;
    routes.push(
      {
        ...base,
        method: 'POST',
        path,
        response: created,
        body: keyBody,
        summary:
          kind === 'rest' ? 'Create an API key (the secret is shown once)' : 'Create an MCP connection credential (svc_mcp_…, shown once)',
        handler: async ({ params, body }) => {
          const accountId = accountParam(params);
          await accountExists(accountId);
          if (
            body.user_id != null &&
            !(await one(em(), 'select id from users where id = ? and account_id = ?', [body.user_id, accountId]))
          ) {
            throw validationFailed({ user_id: ['The issuing user does not belong to this account.'] });
          }
          const key = await createApiKey(em(), accountId, {
            name: body.name,
            userId: body.user_id ?? null,
            kind,
            expiresAt: body.expires_at ? new Date(body.expires_at) : null,
          });
          return ok({ ...keyView(key), token: key.token }, 201);
        },
      },
      {
        ...base,
        method: 'GET',
        path,
        summary: kind === 'rest' ? 'List API keys' : 'List MCP credentials',
        handler: async ({ params }) => {
          await accountExists(accountParam(params));
          return ok(
            (
              await many<Record<string, unknown>>(em(), 'select * from api_keys where account_id = ? and kind = ? order by id', [
                accountParam(params),
                kind,
              ])
            ).map(keyView),
          );
        },
      },
      {
        ...base,
        method: 'DELETE',
        path: `${path}/{key}`,
        summary: 'Revoke (permanent)',
        handler: async ({ params }) => {
          const row = await one<Record<string, unknown>>(
            em(),
            'update api_keys set revoked_at = coalesce(revoked_at, now()) where id = ? and account_id = ? and kind = ? returning *',
            [Number(params.key), accountParam(params), kind],
          );
          if (!row) throw notFound('Key');
          return ok(keyView(row));
        },
      },
    );
  }

  for (const kind of Object.keys(IDENTITY_BODIES) as IdentityKind[]) {
    const path = `${A}/{account}/${kind}`;
    routes.push(
      {
        ...base,
        method: 'GET',
        path,
        summary: `List ${kind}`,
        handler: async ({ params }) => {
          await accountExists(accountParam(params));
          return ok(await listIdentities(em(), kind, accountParam(params)));
        },
      },
      {
        ...base,
        method: 'POST',
        path,
        summary: `Add to ${kind}`,
        response: created,
        body: IDENTITY_BODIES[kind].create,
        handler: async ({ params, body }) => {
          await accountExists(accountParam(params));
          const b = { ...body };
          if (kind === 'phone-numbers' || kind === 'blacklist') {
            const field = kind === 'blacklist' ? 'phone' : 'number';
            b[field] = `+${String(b[field]).replace(/[^\d]/g, '')}`;
          }
          if (kind === 'channels') b.provider ??= b.channel_type === 'sms' ? 'sms-gateway' : 'whatsapp-cloud';
          return ok(await addIdentity(em(), kind, accountParam(params), b), 201);
        },
      },
      {
        ...base,
        method: 'PATCH',
        path: `${path}/{id}`,
        summary: `Change one of ${kind}`,
        body: IDENTITY_BODIES[kind].update,
        handler: async ({ params, body }) => ok(await updateIdentity(em(), kind, accountParam(params), Number(params.id), body)),
      },
      {
        ...base,
        method: 'DELETE',
        path: `${path}/{id}`,
        summary: `Remove one of ${kind}`,
        handler: async ({ params }) => {
          await deleteIdentity(em(), kind, accountParam(params), Number(params.id));
          return ok({ deleted: true });
        },
      },
    );
  }
  return routes;
}
