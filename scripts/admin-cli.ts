// The admin CLI's commands, generated from the operator operations' `cli` entries (api/operation.ts):
// each command is one HTTP call; its flags are the operation's path parameters and body (or query)
// fields, typed by the operation's own JSON Schema. No I/O here: scripts/admin.ts sends the request.
import { parseArgs } from 'node:util';
import type { Operation, Method } from '../api/operation.js';

interface Schema {
  type?: string | readonly string[];
  enum?: readonly unknown[];
  const?: unknown;
  items?: Schema;
  format?: string;
  description?: string;
  properties?: Record<string, Schema>;
  required?: readonly string[];
}

export interface CliFlag {
  /** Without the leading --. */
  flag: string;
  /** The path parameter or body/query field it sets. */
  field: string;
  in: 'path' | 'body' | 'query';
  schema: Schema;
  required: boolean;
}

export interface CliCommand {
  command: string;
  help: string;
  op: Operation;
  fixed: Record<string, unknown>;
  flags: CliFlag[];
}

export interface CliRequest {
  method: Method;
  /** The path with its parameters filled in (percent-encoded), e.g. /admin/v1/accounts/2/keys */
  path: string;
  query: Record<string, string>;
  /** Present for operations with a body schema (an empty object when no flag sets a field). */
  body?: Record<string, unknown>;
}

/** A command line the CLI cannot turn into a request: unknown command or flag, a missing or malformed value. */
export class CliUsageError extends Error {
  constructor(
    message: string,
    public readonly command?: string,
  ) {
    super(message);
    this.name = 'CliUsageError';
  }
}

const kebab = (field: string) => field.replace(/_/g, '-');
const typesOf = (s: Schema): string[] => (s.type === undefined ? [] : typeof s.type === 'string' ? [s.type] : [...s.type]);

/**
 * One command per `cli` entry of every operation. A definition mistake (a command named twice, a
 * flag mapped to a field the operation does not have) throws here, so it fails at start and in the
 * unit test rather than on an operator's command line.
 */
export function cliCommands(ops: readonly Operation[]): CliCommand[] {
  const out: CliCommand[] = [];
  const seen = new Set<string>();
  for (const op of ops) {
    const input = (op.body ?? op.query ?? {}) as Schema;
    const where = op.body ? 'body' : 'query';
    const properties = input.properties ?? {};
    for (const cli of op.cli ?? []) {
      if (seen.has(cli.command)) throw new Error(`admin CLI: command ${cli.command} is defined twice`);
      seen.add(cli.command);
      const fixed = { ...(cli.fixed ?? {}) };
      for (const f of cli.fields ?? [])
        if (!(f in properties)) throw new Error(`admin CLI: ${cli.command} offers ${f}, which ${op.name} does not have`);
      const offered = (cli.fields ?? Object.keys(properties)).filter((f) => !(f in fixed));
      const flagOf = (field: string) => Object.entries(cli.flags ?? {}).find(([, target]) => target === field)?.[0] ?? kebab(field);
      for (const [flag, target] of Object.entries(cli.flags ?? {}))
        if (!op.params.includes(target) && !offered.includes(target))
          throw new Error(`admin CLI: ${cli.command} maps --${flag} to ${target}, which it does not offer`);
      const required = new Set(input.required ?? []);
      const flags: CliFlag[] = [
        ...op.params.map((p) => ({ flag: flagOf(p), field: p, in: 'path' as const, schema: { type: 'string' }, required: true })),
        ...offered.map((f) => ({ flag: flagOf(f), field: f, in: where, schema: properties[f], required: required.has(f) }) as CliFlag),
      ];
      const names = flags.map((f) => f.flag);
      const twice = names.find((n, i) => names.indexOf(n) !== i);
      if (twice) throw new Error(`admin CLI: ${cli.command} has --${twice} twice`);
      out.push({ command: cli.command, help: cli.help ?? op.summary, op, fixed, flags });
    }
  }
  return out;
}

const BOOLEAN = /^(true|false|yes|no|1|0)$/i;

/** A flag's text as the field's schema type wants it: lists, JSON objects, numbers, booleans, null. */
export function coerce(flag: CliFlag, text: string | true): unknown {
  const types = typesOf(flag.schema);
  const name = `--${flag.flag}`;
  if (text === true) {
    if (types.includes('boolean')) return true;
    throw new CliUsageError(`${name} needs a value`);
  }
  if (types.includes('null') && text === 'null') return null;
  if (types.includes('array')) {
    const item = flag.schema.items ?? {};
    // A list of objects (data table columns, masks…) has no comma-separated form: it is given as a JSON array.
    if (text.trimStart().startsWith('[')) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        throw new CliUsageError(`${name} must be a JSON array or a comma-separated list (${(err as Error).message})`);
      }
      if (!Array.isArray(value)) throw new CliUsageError(`${name} must be a JSON array`);
      return value;
    }
    const parts = text
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    return parts.map((p) => coerce({ ...flag, schema: item }, p));
  }
  if (types.includes('object')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new CliUsageError(`${name} must be a JSON object (${(err as Error).message})`);
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CliUsageError(`${name} must be a JSON object`);
    return value;
  }
  if (types.includes('integer')) {
    if (!/^-?\d+$/.test(text)) throw new CliUsageError(`${name} must be an integer, not '${text}'`);
    return Number(text);
  }
  if (types.includes('number')) {
    const n = Number(text);
    if (text.trim() === '' || !Number.isFinite(n)) throw new CliUsageError(`${name} must be a number, not '${text}'`);
    return n;
  }
  if (types.includes('boolean')) {
    if (!BOOLEAN.test(text)) throw new CliUsageError(`${name} is true or false, not '${text}'`);
    return /^(true|yes|1)$/i.test(text);
  }
  if (flag.schema.enum && !flag.schema.enum.includes(text))
    throw new CliUsageError(`${name} must be one of ${flag.schema.enum.join(', ')}, not '${text}'`);
  return text;
}

/**
 * The request one command line asks for. Throws CliUsageError for anything it cannot place.
 *
 * node:util parseArgs reads the line (--flag value, --flag=value, -- and positionals) in its
 * non-strict mode, with every token kept: its strict refusals would name neither the command nor its
 * flags, and a boolean flag here also takes a following true/false (`--default false`), which
 * parseArgs' booleans do not. Every refusal below is ours, naming what the command accepts.
 */
export function buildRequest(cmd: CliCommand, args: readonly string[]): CliRequest {
  const values = new Map<CliFlag, unknown>();
  const byName = new Map(cmd.flags.map((f) => [f.flag, f]));
  const isBoolean = (f: CliFlag) => typesOf(f.schema).includes('boolean');
  const { tokens } = parseArgs({
    args: [...args],
    options: Object.fromEntries(cmd.flags.map((f) => [f.flag, { type: isBoolean(f) ? ('boolean' as const) : ('string' as const) }])),
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i];
    if (token.kind !== 'option') {
      const arg = token.kind === 'positional' ? token.value : '--';
      throw new CliUsageError(`unexpected argument '${arg}': every value follows its --flag`, cmd.command);
    }
    const flag = token.rawName === `--${token.name}` ? byName.get(token.name) : undefined;
    if (!flag) {
      const known = cmd.flags.map((f) => `--${f.flag}`).join(', ') || 'none';
      throw new CliUsageError(`unknown flag ${token.rawName} for ${cmd.command} (its flags: ${known})`, cmd.command);
    }
    if (values.has(flag)) throw new CliUsageError(`--${flag.flag} is given twice`, cmd.command);
    let text: string | true = token.value ?? true;
    const next = tokens[i + 1];
    if (token.value === undefined && isBoolean(flag) && next?.kind === 'positional' && BOOLEAN.test(next.value)) {
      text = next.value;
      i++;
    }
    // parseArgs gives a string flag the next argument whatever it is; a flag there means the value is missing.
    if (!token.inlineValue && typeof text === 'string' && text.startsWith('--')) text = true;
    try {
      values.set(flag, coerce(flag, text));
    } catch (err) {
      if (err instanceof CliUsageError) throw new CliUsageError(err.message, cmd.command);
      throw err;
    }
  }
  const missing = cmd.flags.filter((f) => f.required && !values.has(f));
  if (missing.length) throw new CliUsageError(`${cmd.command} needs ${missing.map((f) => `--${f.flag}`).join(', ')}`, cmd.command);

  const of = (place: CliFlag['in']) => Object.fromEntries([...values].filter(([f]) => f.in === place).map(([f, v]) => [f.field, v]));
  const params = of('path');
  const path = cmd.op.path.replace(/\{(\w+)\}/g, (_m, p: string) => encodeURIComponent(String(params[p])));
  if (cmd.op.body) return { method: cmd.op.method, path, query: {}, body: { ...cmd.fixed, ...of('body') } };
  const query = Object.fromEntries(
    Object.entries({ ...cmd.fixed, ...of('query') }).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : String(v)]),
  );
  return { method: cmd.op.method, path, query };
}

export type Parsed = { kind: 'help'; text: string } | { kind: 'request'; command: CliCommand; request: CliRequest };

/** `help`, `help <command>`, `<command> --help`, or a command and its flags. */
export function parseCommandLine(commands: readonly CliCommand[], argv: readonly string[]): Parsed {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    return { kind: 'help', text: helpText(commands, args[0]) };
  }
  const cmd = commands.find((c) => c.command === name);
  if (!cmd) {
    const family = name.split(':')[0];
    const near = commands.filter((c) => c.command.startsWith(`${family}:`)).map((c) => c.command);
    throw new CliUsageError(`unknown command '${name}'${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`);
  }
  if (args.includes('--help')) return { kind: 'help', text: helpText(commands, name) };
  return { kind: 'request', command: cmd, request: buildRequest(cmd, args) };
}

function placeholder(f: CliFlag): string {
  if (f.in === 'path') return ` <${f.field === 'id' ? 'id' : `${f.field} id`}>`;
  const types = typesOf(f.schema);
  if (types.includes('boolean')) return '';
  if (types.includes('array')) {
    const items = f.schema.items?.enum;
    return items && items.length <= 6 ? ` ${items.slice(0, 2).join(',')}` : ' a,b';
  }
  if (types.includes('object')) return ` '{json}'`;
  if (types.includes('integer') || types.includes('number')) return ' N';
  if (f.schema.enum) return ` ${f.schema.enum.join('|')}`;
  if (f.schema.format === 'date-time') return ' ISO-8601';
  return ` ${f.flag.toUpperCase()}`;
}

export const usage = (f: CliFlag) => (f.required ? `--${f.flag}${placeholder(f)}` : `[--${f.flag}${placeholder(f)}]`);

/** Every command with its flags, or one command in detail. */
export function helpText(commands: readonly CliCommand[], command?: string): string {
  const one = command ? commands.find((c) => c.command === command) : undefined;
  if (command && !one) throw new CliUsageError(`unknown command '${command}'`);
  if (one) {
    const lines = one.flags.map((f) => {
      const about = [
        f.in === 'path' ? `path parameter {${f.field}}` : `${f.in} field ${f.field}`,
        f.required ? 'required' : 'optional',
        f.schema.description,
      ].filter(Boolean);
      return `  ${usage(f).padEnd(44)} ${about.join('; ')}`;
    });
    const fixed = Object.entries(one.fixed).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return [
      `${one.command}: ${one.help}`,
      `  ${one.op.method} ${one.op.path}${fixed.length ? `   (sends ${fixed.join(', ')})` : ''}`,
      '',
      ...(lines.length ? lines : ['  (no flags)']),
      '',
    ].join('\n');
  }
  const width = Math.max(...commands.map((c) => c.command.length)) + 2;
  const rows = commands.map(
    (c) => `  ${c.command.padEnd(width)}${c.flags.map(usage).join(' ') || '(no flags)'}\n  ${''.padEnd(width)}${c.help}`,
  );
  return [
    'usage: npm run admin -- <command> [--flag value ...]     (npm run admin -- help <command> for one command)',
    'Prints the JSON answer on stdout; a refusal exits 1, a command line it cannot read exits 2.',
    'ADMIN_URL (default http://127.0.0.1:8080) and OPERATOR_TOKEN select the service.',
    'Lists are comma separated (--events a,b), objects are JSON (--config \'{"k":"v"}\'), null clears a nullable field.',
    '',
    ...rows,
    '',
  ].join('\n');
}
