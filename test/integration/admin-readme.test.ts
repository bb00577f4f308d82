import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { adminCli, adminProcess } from '../support/admin-cli.js';

// The README's operator examples (issue 25, point 7), run as written, in order, so the README
// cannot drift from the CLI. They are written for a fresh `npm start`, whose dev account, user
// and key are number 1; this stack is shared with other tests, so each id a command names is
// mapped to the one this run created in the same position (the dev account's stand-in first).

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

/** Shell words of one command line: quotes as the shell reads them, a `#` word starts a comment. */
function words(line: string): string[] {
  const out: string[] = [];
  let word: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end);
      i = end;
    } else if (/\s/.test(c)) {
      if (word !== null) out.push(word);
      word = null;
    } else if (c === '#' && word === null) break;
    else word = (word ?? '') + c;
  }
  if (word !== null) out.push(word);
  return out;
}

/** Every `npm run admin -- …` of the README: the shell blocks' lines, then the inline examples. */
function examples(): string[][] {
  const lines: string[] = [];
  for (const block of readme.matchAll(/```sh\n([\s\S]*?)```/g))
    for (const line of block[1]!.split('\n')) if (line.startsWith('npm run admin -- ')) lines.push(line);
  for (const inline of readme.matchAll(/`(npm run admin -- [^`]+)`/g)) lines.push(inline[1]!);
  return lines.map((line) => words(line).slice(4));
}

/** One example through the CLI's own run, in this process (test/support/admin-cli.ts): its exit code and what it printed. */
async function cli(args: string[]): Promise<{ code: number; stdout: string }> {
  const r = await adminCli(args);
  return { code: r.code, stdout: `${r.out}${r.err}` };
}

type Kind = 'account' | 'user' | 'key' | 'endpoint';
/** The flags that name a numbered thing, and the commands that make one (MCP credentials are keys too). */
const FLAG: Record<string, Kind> = { '--account': 'account', '--user': 'user', '--key': 'key', '--endpoint': 'endpoint' };
const MAKES: Record<string, Kind> = {
  'accounts:create': 'account',
  'users:create': 'user',
  'keys:create': 'key',
  'mcp:create': 'key',
  'webhooks:create': 'endpoint',
};

test('every operator example of the README runs as written (ids as a fresh npm start gives them)', { timeout: 300_000 }, async () => {
  const all = examples();
  assert.ok(all.length >= 30, `${all.length} examples found`);
  const created: Record<Kind, string[]> = { account: [], user: [], key: [], endpoint: [] };
  const make = async (args: string[]) => {
    const r = await cli(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stdout}`);
    const kind = MAKES[args[0]!];
    if (kind) created[kind].push(String(JSON.parse(r.stdout).data.id));
    return r;
  };
  // What `npm start` makes before anything else (scripts/dev.ts): the dev account, its user and key.
  await make(['accounts:create', '--name', 'Dev account', '--balance', '100', '--currency', 'USD']);
  const dev = created.account[0]!;
  await make([
    'users:create',
    '--account',
    dev,
    '--email',
    `dev${Date.now()}@example.com`,
    '--name',
    'Dev user',
    '--permissions',
    'contacts.view',
  ]);
  await make(['keys:create', '--account', dev, '--name', 'dev key', '--user', created.user[0]!]);

  /**
   * The command line with each id a fresh start would have given replaced by the one this stack
   * gave, and each placeholder (`…`, a value only the reader has) by an id no one made.
   */
  const withIds = (example: string[]) =>
    example.map((w, i) => {
      if (w.includes('…')) return w.replace('…', '999999');
      const kind = FLAG[example[i - 1] ?? ''];
      if (!kind || !/^\d+$/.test(w)) return w;
      const real = created[kind][Number(w) - 1];
      assert.ok(real, `${example.join(' ')}: a fresh start has no ${kind} ${w} at this point`);
      return real;
    });
  const placeholders: string[] = [];
  for (const example of all) {
    const args = withIds(example);
    if (example.some((w) => w.includes('…'))) {
      // An event id, an order a customer placed: the command line must still be one the CLI reads,
      // and reach its operation, which finds nothing by an id no one made.
      placeholders.push(example.join(' '));
      assert.equal((await cli(['help', example[0]!])).code, 0, example[0]);
      const r = await cli(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stdout, /"status": "error"[\s\S]*not found/, args.join(' '));
      continue;
    }
    if (args[0] === 'help') {
      assert.equal((await cli(args)).code, 0);
      continue;
    }
    await make(args);
  }
  assert.deepEqual(placeholders, [
    'mcp-connections:revoke --account 2 --connection oauth_…',
    'webhooks:redeliver --account 2 --event evt_… --endpoint 1',
    'shops:show --account 2 --shop …',
    'products:list --account 2 --shop … --search coffee',
    'products:show --account 2 --shop … --product …',
    'orders:show --account 2 --order …',
    'orders:status --account 2 --order … --status cancelled',
    'baskets:show --account 2 --basket …',
    'payments:show --account 2 --payment …',
    'payments:refund --account 2 --payment … --amount-minor 500000 --reason one item was missing',
    'payments:cancel --account 2 --payment … --reason customer changed their mind',
  ]);
});

test('the CLI as a process: `npm run admin --` prints the answer and exits 0, 1 on a refusal, 2 on a command line it cannot read', async () => {
  const made = await adminProcess(['accounts:create', '--name', 'Process account', '--balance', '1', '--currency', 'USD']);
  assert.equal(made.code, 0, made.stderr);
  const id = JSON.parse(made.stdout).data.id;
  const refused = await adminProcess(['users:list', '--account', '999999999']);
  assert.equal(refused.code, 1, refused.stdout);
  assert.match(refused.stderr, /^error: GET \/admin\/v1\/accounts\/999999999\/users answered 404/);
  const unread = await adminProcess(['accounts:show', '--acount', String(id)]);
  assert.equal(unread.code, 2);
  assert.match(unread.stderr, /see: npm run admin -- help accounts:show/);
});
