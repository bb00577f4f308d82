import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { customerOperations, operatorOperations } from '../../api/operations.js';
import { cliCommands, parseCommandLine, helpText, CliUsageError, type CliRequest } from '../../scripts/admin-cli.js';

// The admin CLI is generated from the operator operations: every operation has a command, flags
// become the right path, body or query, and a command line it cannot read fails clearly.

const commands = cliCommands(operatorOperations);
const request = (...argv: string[]): CliRequest => {
  const parsed = parseCommandLine(commands, argv);
  assert.equal(parsed.kind, 'request');
  return parsed.kind === 'request' ? parsed.request : (undefined as never);
};
const refusal = (argv: string[], pattern: RegExp) =>
  assert.throws(
    () => parseCommandLine(commands, argv),
    (err: unknown) => err instanceof CliUsageError && pattern.test(err.message),
  );

test('every operator operation is served under /admin/v1 and has at least one CLI command', () => {
  assert.ok(operatorOperations.length >= 40);
  for (const op of operatorOperations) {
    assert.equal(op.auth, 'operator', op.name);
    assert.match(op.path, /^\/admin\/v1\//, op.name);
    assert.ok(
      commands.some((c) => c.op === op),
      `${op.name} (${op.method} ${op.path}) has no CLI command`,
    );
  }
  const names = [...customerOperations, ...operatorOperations].map((op) => op.name);
  assert.deepEqual(
    names.filter((n, i) => names.indexOf(n) !== i),
    [],
    'operation names (OpenAPI operationIds, MCP tool names) are unique',
  );
});

test('operator routes keep fixed paths before {param} ones', () => {
  const pattern = (p: string) => new RegExp(`^${p.replace(/\{\w+\}/g, '[^/]+')}$`);
  operatorOperations.forEach((earlier, i) => {
    for (const later of operatorOperations.slice(i + 1)) {
      if (earlier.method === later.method && earlier.path !== later.path && pattern(earlier.path).test(later.path))
        assert.fail(`${later.method} ${later.path} is shadowed by ${earlier.path}`);
    }
  });
});

test('the commands and flags of the README still parse', () => {
  const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
  const lines = [...readme.matchAll(/^npm run admin -- (.+)$/gm)].map((m) => m[1].replace(/\s+#.*$/, '').replace(/\[(--[^\]]*)\]/g, '$1'));
  assert.ok(lines.length >= 15);
  for (const line of lines) {
    const argv = [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]);
    assert.doesNotThrow(() => parseCommandLine(commands, argv), line);
  }
});

test('flags become path parameters and typed body fields', () => {
  assert.deepEqual(request('accounts:create', '--name', 'Acme Shop', '--currency', 'TZS', '--balance', '50'), {
    method: 'POST',
    path: '/admin/v1/accounts',
    query: {},
    body: { name: 'Acme Shop', currency: 'TZS', wallet_balance: 50 },
  });
  assert.deepEqual(request('accounts:suspend', '--account', '2'), {
    method: 'PATCH',
    path: '/admin/v1/accounts/2',
    query: {},
    body: { status: 'suspended' },
  });
  assert.deepEqual(request('wallet:set', '--account', '2', '--balance', '80.5', '--billing-mode', 'postpaid').body, {
    wallet_balance: 80.5,
    billing_mode: 'postpaid',
  });
  assert.deepEqual(
    request('numbers:add', '--account', '2', '--number', '+255700000001', '--capabilities', 'sms, whatsapp', '--phone-number-id', '1234'),
    {
      method: 'POST',
      path: '/admin/v1/accounts/2/phone-numbers',
      query: {},
      body: { number: '+255700000001', capabilities: ['sms', 'whatsapp'], provider_phone_number_id: '1234' },
    },
  );
  assert.deepEqual(request('channels:add', '--account', '2', '--type', 'sms', '--code', 'acme-sms', '--default').body, {
    channel_type: 'sms',
    code: 'acme-sms',
    is_default: true,
  });
  assert.deepEqual(request('channels:update', '--account', '2', '--id', '4', '--default', 'false', '--active=true').body, {
    is_default: false,
    active: true,
  });
  assert.deepEqual(request('keys:create', '--account', '2', '--name', 'backend', '--user', '3').body, { name: 'backend', user_id: 3 });
  assert.deepEqual(request('senders:update', '--account', '2', '--id', '7', '--channel', 'null').body, { channel_id: null });
  const op = request(
    'operations:create',
    '--account',
    '2',
    '--name',
    'otp',
    '--kind',
    'send_sms',
    '--config',
    '{"message":"Code {{code}}"}',
  );
  assert.deepEqual(op.body, { name: 'otp', kind: 'send_sms', config: { message: 'Code {{code}}' } });
  const schedule = request(
    'schedules:create',
    '--account',
    '2',
    '--name',
    'n',
    '--operation',
    'otp',
    '--every-seconds',
    '86400',
    '--input',
    '{"to":"+1"}',
  );
  assert.deepEqual(schedule.body, { name: 'n', operation: 'otp', every_seconds: 86400, input: { to: '+1' } });
  assert.deepEqual(request('webhooks:rotate', '--account', '2', '--endpoint', '1'), {
    method: 'POST',
    path: '/admin/v1/accounts/2/webhook-endpoints/1/rotate-secret',
    query: {},
    body: {},
  });
  assert.deepEqual(request('webhooks:redeliver', '--account', '2', '--event', 'evt/1', '--endpoint', '5'), {
    method: 'POST',
    path: '/admin/v1/accounts/2/events/evt%2F1/redeliver',
    query: {},
    body: { endpoint_id: 5 },
  });
});

test('flags of a read become its query string', () => {
  assert.deepEqual(request('webhooks:deliveries', '--account', '2', '--status', 'failed', '--endpoint', '3', '--limit', '5'), {
    method: 'GET',
    path: '/admin/v1/accounts/2/webhook-deliveries',
    query: { status: 'failed', endpoint_id: '3', limit: '5' },
  });
  assert.deepEqual(request('keys:list', '--account', '9'), { method: 'GET', path: '/admin/v1/accounts/9/keys', query: {} });
  assert.deepEqual(request('keys:revoke', '--account', '9', '--key', '12'), {
    method: 'DELETE',
    path: '/admin/v1/accounts/9/keys/12',
    query: {},
  });
});

test('unknown commands and flags, missing or malformed values fail with a clear message', () => {
  refusal(['accounts:crate'], /unknown command 'accounts:crate' \(did you mean accounts:list, accounts:create/);
  refusal(['nothing'], /unknown command 'nothing'/);
  refusal(
    ['keys:create', '--account', '2', '--name', 'k', '--nme', 'x'],
    /unknown flag --nme for keys:create \(its flags: --account, --name/,
  );
  refusal(['accounts:suspend', '--account', '2', '--status', 'active'], /unknown flag --status/);
  refusal(['keys:create', '--name', 'k'], /keys:create needs --account/);
  refusal(['accounts:create', '--name'], /--name needs a value/);
  refusal(['accounts:create', '--name', 'A', '--balance', 'lots'], /--balance must be a number/);
  refusal(
    ['schedules:create', '--account', '2', '--name', 'n', '--operation', 'o', '--every-seconds', '1.5'],
    /--every-seconds must be an integer/,
  );
  refusal(['operations:create', '--account', '2', '--name', 'o', '--kind', 'send_sms', '--config', '{'], /--config must be a JSON object/);
  refusal(
    ['operations:create', '--account', '2', '--name', 'o', '--kind', 'send_sms', '--config', '[1]'],
    /--config must be a JSON object/,
  );
  refusal(['accounts:create', '--name', 'A', '--billing-mode', 'monthly'], /--billing-mode must be one of prepaid, postpaid/);
  refusal(['accounts:show', '2'], /unexpected argument '2'/);
  refusal(['accounts:show', '--account', '2', '--account', '3'], /--account is given twice/);
});

test('help lists every command with its flags taken from the schemas', () => {
  const text = helpText(commands);
  for (const c of commands) {
    const line = text.split('\n').find((l) => l.trimStart().startsWith(`${c.command} `));
    assert.ok(line, `${c.command} listed`);
    for (const f of c.flags) assert.ok(line.includes(`--${f.flag}`), `${c.command} shows --${f.flag}`);
  }
  assert.match(text, /accounts:create +--name NAME \[--currency CURRENCY\] \[--billing-mode prepaid\|postpaid\] \[--balance N\]/);
  const one = parseCommandLine(commands, ['help', 'numbers:add']);
  assert.equal(one.kind, 'help');
  assert.match(one.kind === 'help' ? one.text : '', /--phone-number-id .*body field provider_phone_number_id; optional/);
  assert.equal(parseCommandLine(commands, ['keys:create', '--help']).kind, 'help');
});

test("commerce commands: --shop names the shop (a path parameter, or orders:list's catalogue_id), --basket a basket", () => {
  assert.deepEqual(request('products:show', '--account', '2', '--shop', '5', '--product', '9'), {
    method: 'GET',
    path: '/admin/v1/accounts/2/catalogues/5/products/9',
    query: {},
  });
  assert.deepEqual(request('products:list', '--account', 'acc_x', '--shop', '5', '--availability', 'in stock', '--per-page', '10'), {
    method: 'GET',
    path: '/admin/v1/accounts/acc_x/catalogues/5/products',
    query: { availability: 'in stock', per_page: '10' },
  });
  assert.deepEqual(request('orders:list', '--account', '2', '--shop', '5', '--status', 'pending'), {
    method: 'GET',
    path: '/admin/v1/accounts/2/orders',
    query: { catalogue_id: '5', status: 'pending' },
  });
  assert.deepEqual(request('orders:status', '--account', '2', '--order', '7', '--status', 'cancelled'), {
    method: 'PUT',
    path: '/admin/v1/accounts/2/orders/7/status',
    query: {},
    body: { status: 'cancelled' },
  });
  assert.equal(request('baskets:show', '--account', '2', '--basket', 'AB3DE').path, '/admin/v1/accounts/2/carts/AB3DE');
  refusal(['orders:status', '--account', '2', '--order', '7', '--status', 'lost'], /--status must be one of pending, .*not 'lost'/);
  refusal(['orders:list', '--account', '2', '--shop', 'five'], /--shop must be an integer, not 'five'/);
  refusal(['products:show', '--account', '2', '--shop', '5'], /products:show needs --product/);
});

test('a definition mistake is caught when the commands are built', () => {
  const [op] = operatorOperations;
  assert.throws(
    () => cliCommands([{ ...op, cli: [{ command: 'x:y', flags: { nope: 'no_such_field' } }] }]),
    /maps --nope to no_such_field/,
  );
  assert.throws(() => cliCommands([op, op]), /defined twice/);
});

test('the command line is read by node:util parseArgs: = values, -- and short options', () => {
  assert.deepEqual(request('accounts:create', '--name=--Acme--', '--balance=-5').body, { name: '--Acme--', wallet_balance: -5 });
  assert.deepEqual(request('accounts:create', '--name', '-Acme').body, { name: '-Acme' }, 'one dash is a value');
  refusal(['accounts:create', '--name', '--currency', 'TZS'], /--name needs a value/);
  refusal(['accounts:create', '-n', 'Acme'], /unknown flag -n for accounts:create \(its flags: --name/);
  refusal(['accounts:create', '--name', 'A', '--', '--currency', 'TZS'], /unexpected argument '--'/);
  refusal(['channels:add', '--account', '2', '--type', 'sms', '--code', 'c', '--default', 'maybe'], /unexpected argument 'maybe'/);
  refusal(['channels:add', '--account', '2', '--type', 'sms', '--code', 'c', '--default=maybe'], /--default is true or false, not 'maybe'/);
});
