// Operator CLI over the admin HTTP API. Prints JSON on stdout; exits non-zero on a refusal.
//   npm run admin -- <command> [--flag value ...]      (npm run admin -- help)
// ADMIN_URL (default http://127.0.0.1:8080) and OPERATOR_TOKEN select the service.
const COMMANDS: Record<
  string,
  {
    method: string;
    path: string;
    help: string;
    body?: (f: Flags) => Record<string, unknown>;
    query?: (f: Flags) => Record<string, string | undefined>;
  }
> = {
  'accounts:list': { method: 'GET', path: '/accounts', help: '' },
  'accounts:create': {
    method: 'POST',
    path: '/accounts',
    help: '--name N [--currency USD] [--billing-mode prepaid|postpaid] [--balance 10]',
    body: (f) => ({ name: f.name, currency: f.currency, billing_mode: f['billing-mode'], wallet_balance: num(f.balance) }),
  },
  'accounts:show': { method: 'GET', path: '/accounts/:account', help: '--account ID' },
  'accounts:suspend': { method: 'PATCH', path: '/accounts/:account', help: '--account ID', body: () => ({ status: 'suspended' }) },
  'accounts:activate': { method: 'PATCH', path: '/accounts/:account', help: '--account ID', body: () => ({ status: 'active' }) },
  'wallet:set': {
    method: 'PATCH',
    path: '/accounts/:account',
    help: '--account ID [--balance 50] [--currency TZS] [--billing-mode prepaid|postpaid]',
    body: (f) => ({ wallet_balance: num(f.balance), currency: f.currency, billing_mode: f['billing-mode'] }),
  },
  'users:list': { method: 'GET', path: '/accounts/:account/users', help: '--account ID' },
  'users:create': {
    method: 'POST',
    path: '/accounts/:account/users',
    help: '--account ID --email E --name N [--permissions a,b]',
    body: (f) => ({ email: f.email, name: f.name, permissions: list(f.permissions) }),
  },
  'users:deactivate': {
    method: 'PATCH',
    path: '/accounts/:account/users/:user',
    help: '--account ID --user ID',
    body: () => ({ active: false }),
  },
  'users:activate': {
    method: 'PATCH',
    path: '/accounts/:account/users/:user',
    help: '--account ID --user ID',
    body: () => ({ active: true }),
  },
  'users:permissions': {
    method: 'PATCH',
    path: '/accounts/:account/users/:user',
    help: '--account ID --user ID --permissions a,b',
    body: (f) => ({ permissions: list(f.permissions) ?? [] }),
  },
  'keys:list': { method: 'GET', path: '/accounts/:account/keys', help: '--account ID' },
  'keys:create': {
    method: 'POST',
    path: '/accounts/:account/keys',
    help: '--account ID --name N [--user ID] [--expires-at ISO]',
    body: (f) => ({ name: f.name, user_id: f.user ? Number(f.user) : null, expires_at: f['expires-at'] }),
  },
  'keys:revoke': { method: 'DELETE', path: '/accounts/:account/keys/:key', help: '--account ID --key ID' },
  'mcp:list': { method: 'GET', path: '/accounts/:account/mcp-credentials', help: '--account ID' },
  'mcp:create': {
    method: 'POST',
    path: '/accounts/:account/mcp-credentials',
    help: '--account ID --name N [--user ID]',
    body: (f) => ({ name: f.name, user_id: f.user ? Number(f.user) : null, expires_at: f['expires-at'] }),
  },
  'mcp:revoke': { method: 'DELETE', path: '/accounts/:account/mcp-credentials/:key', help: '--account ID --key ID' },
  'senders:list': { method: 'GET', path: '/accounts/:account/sender-ids', help: '--account ID' },
  'senders:add': {
    method: 'POST',
    path: '/accounts/:account/sender-ids',
    help: '--account ID --value ACME [--status approved] [--channel ID]',
    body: (f) => ({ value: f.value, approval_status: f.status, channel_id: f.channel ? Number(f.channel) : undefined }),
  },
  'senders:approve': {
    method: 'PATCH',
    path: '/accounts/:account/sender-ids/:id',
    help: '--account ID --id ID',
    body: () => ({ approval_status: 'approved' }),
  },
  'numbers:list': { method: 'GET', path: '/accounts/:account/phone-numbers', help: '--account ID' },
  'numbers:add': {
    method: 'POST',
    path: '/accounts/:account/phone-numbers',
    help: '--account ID --number +255700000001 --capabilities sms,whatsapp [--phone-number-id ID] [--waba ID]',
    body: (f) => ({
      number: f.number,
      capabilities: list(f.capabilities) ?? ['sms'],
      provider_phone_number_id: f['phone-number-id'],
      business_account_id: f.waba,
    }),
  },
  'numbers:release': {
    method: 'PATCH',
    path: '/accounts/:account/phone-numbers/:id',
    help: '--account ID --id ID',
    body: () => ({ released: true }),
  },
  'short-codes:list': { method: 'GET', path: '/accounts/:account/short-codes', help: '--account ID' },
  'short-codes:add': {
    method: 'POST',
    path: '/accounts/:account/short-codes',
    help: '--account ID --code 15001 [--status active|inactive]',
    body: (f) => ({ code: f.code, assignment_status: f.status }),
  },
  'channels:list': { method: 'GET', path: '/accounts/:account/channels', help: '--account ID' },
  'channels:add': {
    method: 'POST',
    path: '/accounts/:account/channels',
    help: '--account ID --type sms|whatsapp --code C [--default]',
    body: (f) => ({ channel_type: f.type, code: f.code, is_default: f.default !== undefined }),
  },
  'blacklist:list': { method: 'GET', path: '/accounts/:account/blacklist', help: '--account ID' },
  'blacklist:add': {
    method: 'POST',
    path: '/accounts/:account/blacklist',
    help: '--account ID --phone +255700000009 [--channel ID]',
    body: (f) => ({ phone: f.phone, channel_id: f.channel ? Number(f.channel) : undefined }),
  },
  'webhooks:list': { method: 'GET', path: '/accounts/:account/webhook-endpoints', help: '--account ID' },
  'webhooks:create': {
    method: 'POST',
    path: '/accounts/:account/webhook-endpoints',
    help: '--account ID --url URL [--events message.*,order.paid] [--description D]   (secret shown once)',
    body: (f) => ({ url: f.url, events: list(f.events), description: f.description }),
  },
  'webhooks:show': { method: 'GET', path: '/accounts/:account/webhook-endpoints/:endpoint', help: '--account ID --endpoint ID' },
  'webhooks:update': {
    method: 'PATCH',
    path: '/accounts/:account/webhook-endpoints/:endpoint',
    help: '--account ID --endpoint ID [--url URL] [--events a,b] [--description D]',
    body: (f) => ({ url: f.url, events: list(f.events), description: f.description }),
  },
  'webhooks:disable': {
    method: 'PATCH',
    path: '/accounts/:account/webhook-endpoints/:endpoint',
    help: '--account ID --endpoint ID',
    body: () => ({ status: 'disabled' }),
  },
  'webhooks:enable': {
    method: 'PATCH',
    path: '/accounts/:account/webhook-endpoints/:endpoint',
    help: '--account ID --endpoint ID   (clears the failure count)',
    body: () => ({ status: 'active' }),
  },
  'webhooks:delete': { method: 'DELETE', path: '/accounts/:account/webhook-endpoints/:endpoint', help: '--account ID --endpoint ID' },
  'webhooks:rotate': {
    method: 'POST',
    path: '/accounts/:account/webhook-endpoints/:endpoint/rotate-secret',
    help: '--account ID --endpoint ID [--overlap-hours 24]   (new secret shown once)',
    body: (f) => ({ overlap_hours: num(f['overlap-hours']) }),
  },
  'webhooks:deliveries': {
    method: 'GET',
    path: '/accounts/:account/webhook-deliveries',
    help: '--account ID [--event evt_…] [--endpoint ID] [--status failed] [--limit 20]   (with attempt logs)',
    query: (f) => ({ event_id: f.event, endpoint_id: f.endpoint, status: f.status, limit: f.limit }),
  },
  'webhooks:redeliver': {
    method: 'POST',
    path: '/accounts/:account/events/:event/redeliver',
    help: '--account ID --event evt_… [--endpoint ID]',
    body: (f) => ({ endpoint_id: num(f.endpoint) }),
  },
  'events:list': {
    method: 'GET',
    path: '/accounts/:account/events',
    help: '--account ID [--kind message.delivered] [--limit 20]',
    query: (f) => ({ kind: f.kind, limit: f.limit }),
  },
  'subscriptions:list': { method: 'GET', path: '/accounts/:account/automation-subscriptions', help: '--account ID' },
  'subscriptions:create': {
    method: 'POST',
    path: '/accounts/:account/automation-subscriptions',
    help: '--account ID --event-type order.* --url URL   (secret shown once)',
    body: (f) => ({ event_type: f['event-type'], target_url: f.url, description: f.description }),
  },
  'subscriptions:pause': {
    method: 'PATCH',
    path: '/accounts/:account/automation-subscriptions/:id',
    help: '--account ID --id ID',
    body: () => ({ active: false }),
  },
  'subscriptions:resume': {
    method: 'PATCH',
    path: '/accounts/:account/automation-subscriptions/:id',
    help: '--account ID --id ID',
    body: () => ({ active: true }),
  },
  'subscriptions:delete': { method: 'DELETE', path: '/accounts/:account/automation-subscriptions/:id', help: '--account ID --id ID' },
  'operations:list': { method: 'GET', path: '/accounts/:account/operations', help: '--account ID' },
  'operations:create': {
    method: 'POST',
    path: '/accounts/:account/operations',
    help: `--account ID --name N --kind send_sms|emit_business_event --config '{"message":"Code {{code}}"}'`,
    body: (f) => ({ name: f.name, kind: f.kind, config: json(f.config), description: f.description }),
  },
  'operations:delete': { method: 'DELETE', path: '/accounts/:account/operations/:id', help: '--account ID --id ID' },
  'operations:runs': { method: 'GET', path: '/accounts/:account/operation-runs', help: '--account ID' },
  'schedules:list': { method: 'GET', path: '/accounts/:account/schedules', help: '--account ID' },
  'schedules:create': {
    method: 'POST',
    path: '/accounts/:account/schedules',
    help: `--account ID --name N --operation N --every-seconds 3600 [--input '{"data":{}}']`,
    body: (f) => ({ name: f.name, operation: f.operation, every_seconds: num(f['every-seconds']), input: json(f.input) }),
  },
  'schedules:delete': { method: 'DELETE', path: '/accounts/:account/schedules/:id', help: '--account ID --id UUID' },
};

type Flags = Record<string, string | undefined>;
const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
const json = (v: string | undefined) => (v === undefined ? undefined : (JSON.parse(v) as Record<string, unknown>));
const list = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

const [command, ...rest] = process.argv.slice(2);
const flags: Flags = {};
for (let i = 0; i < rest.length; i++) {
  if (!rest[i].startsWith('--')) continue;
  const next = rest[i + 1];
  flags[rest[i].slice(2)] = next !== undefined && !next.startsWith('--') ? (i++, next) : 'true';
}

const spec = command ? COMMANDS[command] : undefined;
if (!spec) {
  process.stderr.write(
    `usage: npm run admin -- <command> [flags]\n\n${Object.entries(COMMANDS)
      .map(([c, s]) => `  ${c.padEnd(22)} ${s.help}`)
      .join('\n')}\n`,
  );
  process.exit(command && command !== 'help' ? 2 : 0);
}
const path = spec.path.replace(/:(\w+)/g, (_m, name: string) => {
  const v = flags[name];
  if (!v) {
    process.stderr.write(`missing --${name}\n`);
    process.exit(2);
  }
  return encodeURIComponent(v);
});
const base = (process.env.ADMIN_URL ?? 'http://127.0.0.1:8080').replace(/\/$/, '');
const body = spec.body
  ? JSON.stringify(Object.fromEntries(Object.entries(spec.body(flags)).filter(([, v]) => v !== undefined)))
  : undefined;
const query = spec.query
  ? new URLSearchParams(Object.entries(spec.query(flags)).filter((e): e is [string, string] => e[1] !== undefined)).toString()
  : '';
const res = await fetch(`${base}/admin/v1${path}${query ? `?${query}` : ''}`, {
  method: spec.method,
  headers: {
    authorization: `Bearer ${process.env.OPERATOR_TOKEN ?? 'dev-operator-token'}`,
    accept: 'application/json',
    ...(body ? { 'content-type': 'application/json' } : {}),
  },
  body,
});
process.stdout.write(`${JSON.stringify(await res.json(), null, 2)}\n`);
process.exit(res.ok ? 0 : 1);
