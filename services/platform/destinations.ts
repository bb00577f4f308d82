import dns from 'node:dns';
import net from 'node:net';
import { Agent, buildConnector } from 'undici';
import { validationFailed } from './errors.js';

// Where the service may send a request on a customer's behalf (webhook endpoints, automation
// subscriptions, later feed URLs). A URL an account controls must never let it reach the service's
// own network: loopback, private ranges, link-local (cloud metadata at 169.254.169.254) and the
// like. The check runs when the URL is saved and again on every connection, because what a name
// resolves to can change between the two.

export interface DestinationPolicy {
  /** Loopback is for local development and the test stack only; link-local and metadata never. */
  allowLoopbackDestinations: boolean;
}

export type AddressClass = 'public' | 'loopback' | 'private' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

/** The one message a refused connection leaves anywhere an account can read it. */
export const DESTINATION_NOT_ALLOWED = 'destination not allowed';

export class DestinationRefused extends Error {
  readonly code = 'ERR_DESTINATION_NOT_ALLOWED';
  constructor() {
    super(DESTINATION_NOT_ALLOWED);
    this.name = 'DestinationRefused';
  }
}

type V4 = [number, number, number, number];

function v4Class([a, b, c]: V4): AddressClass {
  if (a === 0) return 'unspecified';
  if (a === 127) return 'loopback';
  if (a === 10 || (a === 172 && b >= 16 && b <= 31) || (a === 192 && b === 168)) return 'private';
  if (a === 100 && b >= 64 && b <= 127) return 'private'; // carrier-grade NAT, inside someone's network
  if (a === 169 && b === 254) return 'link-local';
  if (a >= 224 && a <= 239) return 'multicast';
  if (a >= 240) return 'reserved'; // includes 255.255.255.255
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return 'reserved';
  if (a === 198 && (b === 18 || b === 19)) return 'reserved';
  if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return 'reserved';
  return 'public';
}

/** The 16 bytes of an IPv6 address (valid per net.isIPv6), including a dotted IPv4 tail. */
function v6Bytes(ip: string): number[] {
  let text = ip;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    tail.push(...dotted[1].split('.').map(Number));
    text = `${text.slice(0, dotted.index)}0:0`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, null];
  const groups = (s: string) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const r = rest === null ? [] : groups(rest);
  const words = [...h, ...Array<number>(8 - h.length - r.length).fill(0), ...r];
  const bytes = words.flatMap((w) => [w >> 8, w & 0xff]);
  if (tail.length) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** True when the first `bits` bits of `b` are those of `prefix` (bytes). */
function within(b: number[], prefix: number[], bits: number): boolean {
  for (let i = 0; i * 8 < bits; i++) {
    const mask = bits - i * 8 >= 8 ? 0xff : (0xff << (8 - (bits - i * 8))) & 0xff;
    if ((b[i] & mask) !== (prefix[i] & mask)) return false;
  }
  return true;
}

/**
 * IPv6 is judged by what it reaches. The forms that carry an IPv4 address a host or a gateway
 * forwards to are judged by that address: IPv4-mapped (::ffff:0:0/96), IPv4-translated
 * (::ffff:0:0:0/96, SIIT), the NAT64 well-known prefix (64:ff9b::/96) and 6to4 (2002::/16). Forms
 * whose IPv4 address cannot be read from the address alone are refused whole: the local-use NAT64
 * prefix (64:ff9b:1::/48, whose translator sits inside someone's network and places the IPv4
 * address where its operator chose) and Teredo (2001::/32, the address obfuscated). Outside those,
 * only global unicast (2000::/3) is public; the rest of the space (the discard prefix 100::/64,
 * IPv4-compatible ::/96, the unassigned blocks) is reserved.
 */
function v6Class(ip: string): AddressClass {
  const b = v6Bytes(ip);
  const zeros = (n: number) => b.slice(0, n).every((x) => x === 0);
  const embedded = b.slice(12, 16) as V4;
  if (zeros(10) && b[10] === 0xff && b[11] === 0xff) return v4Class(embedded); // ::ffff:a.b.c.d
  if (zeros(8) && b[8] === 0xff && b[9] === 0xff && b[10] === 0 && b[11] === 0) return v4Class(embedded); // ::ffff:0:a.b.c.d
  if (zeros(15)) return b[15] === 1 ? 'loopback' : b[15] === 0 ? 'unspecified' : 'reserved';
  if (within(b, [0x00, 0x64, 0xff, 0x9b], 96)) return v4Class(embedded); // 64:ff9b::/96
  if (within(b, [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01], 48)) return 'private'; // 64:ff9b:1::/48, local-use NAT64
  if (within(b, [0x20, 0x02], 16)) return v4Class(b.slice(2, 6) as V4); // 6to4
  if ((b[0] & 0xfe) === 0xfc) return 'private';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0x80) return 'link-local';
  if (b[0] === 0xfe && (b[1] & 0xc0) === 0xc0) return 'private'; // site-local, deprecated
  if (b[0] === 0xff) return 'multicast';
  if ((b[0] & 0xe0) !== 0x20) return 'reserved'; // not global unicast: 100::/64 discard, ::/96, unassigned
  if (within(b, [0x20, 0x01, 0x00, 0x00], 32)) return 'reserved'; // Teredo
  if (within(b, [0x20, 0x01, 0x00, 0x02, 0x00, 0x00], 48)) return 'reserved'; // benchmarking
  if (within(b, [0x20, 0x01, 0x0d, 0xb8], 32) || within(b, [0x3f, 0xff], 20)) return 'reserved'; // documentation
  return 'public';
}

/** What kind of address an IP literal is; anything that is not an IP address is null. */
export function classifyAddress(address: string): AddressClass | null {
  const ip = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  if (net.isIPv4(ip)) return v4Class(ip.split('.').map(Number) as V4);
  if (net.isIPv6(ip)) return v6Class(ip);
  return null;
}

export function addressAllowed(address: string, policy: DestinationPolicy): boolean {
  const cls = classifyAddress(address);
  return cls === 'public' || (cls === 'loopback' && policy.allowLoopbackDestinations);
}

const CLASS_WORDS: Record<Exclude<AddressClass, 'public'>, string> = {
  loopback: 'a loopback address',
  private: 'a private network address',
  'link-local': 'a link-local address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

/**
 * The schema of a URL the service will call (webhook endpoints, automation subscriptions, product
 * feeds): an absolute http(s) URI. The address policy (no loopback, private or metadata address,
 * judged again when connecting) depends on DNS and cannot be a schema; its refusal is a 422 on the
 * field (docs/security.md).
 */
export const destinationUrlSchema = { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 } as const;

/** Names that stand for loopback without any lookup (RFC 6761). */
const isLoopbackName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Checks a URL as text: scheme, credentials, and a host that is an address or a loopback name.
 * WHATWG parsing has already turned decimal, octal and hex IPv4 spellings into dotted quads, so
 * `http://2130706433/` arrives here as 127.0.0.1. Returns the reason it is refused, or the host
 * name still to be resolved.
 */
export function checkDestinationText(raw: string, policy: DestinationPolicy): { refused: string } | { host: string | null } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'Must be an absolute http or https URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { refused: 'Must be an http or https URL.' };
  if (url.username || url.password) return { refused: 'Must not carry credentials; authenticate with the signature headers instead.' };
  const host = url.hostname.replace(/\.+$/, '').toLowerCase();
  const cls = classifyAddress(host) ?? (isLoopbackName(host) ? 'loopback' : null);
  if (cls === null) return { host };
  if (cls === 'public' || (cls === 'loopback' && policy.allowLoopbackDestinations)) return { host: null };
  return { refused: `Must not point to ${CLASS_WORDS[cls]}.` };
}

export type LookupAll = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookupAll: LookupAll = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

/** How long a save waits for DNS; a name that does not answer in time is checked at connect time. */
const SAVE_LOOKUP_MS = 2_000;

/**
 * The check when a URL is saved: the text, then every address its name resolves to now. A name that
 * does not resolve yet is accepted (it may be set up later); every connection checks it again.
 * Throws a 422 naming `field`.
 */
export async function assertDestinationAllowed(
  raw: string,
  policy: DestinationPolicy,
  field: string,
  lookupAll: LookupAll = systemLookupAll,
): Promise<void> {
  const text = checkDestinationText(raw, policy);
  if ('refused' in text) throw validationFailed({ [field]: [text.refused] });
  if (text.host === null) return;
  let timer: NodeJS.Timeout | undefined;
  const addresses = await Promise.race([
    lookupAll(text.host).catch(() => []),
    new Promise<[]>((resolve) => (timer = setTimeout(() => resolve([]), SAVE_LOOKUP_MS))),
  ]).finally(() => clearTimeout(timer));
  const bad = addresses.find((a) => !addressAllowed(a.address, policy));
  if (bad) {
    const cls = classifyAddress(bad.address) as Exclude<AddressClass, 'public'>;
    throw validationFailed({ [field]: [`Must not point to ${CLASS_WORDS[cls]} (the host name resolves to one).`] });
  }
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves every address of the name and refuses the connection
 * if any of them is not allowed (one bad answer among good ones could be picked on a retry).
 */
export function checkedLookup(policy: DestinationPolicy, lookupAll: LookupAll = systemLookupAll) {
  return (hostname: string, options: dns.LookupOptions, callback: LookupCallback): void => {
    lookupAll(hostname).then(
      (all) => {
        const wanted = options.family === 4 || options.family === 6 ? all.filter((a) => a.family === options.family) : all;
        if (!wanted.length) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        if (all.some((a) => !addressAllowed(a.address, policy))) return callback(new DestinationRefused(), '');
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0].address, wanted[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    );
  };
}

/**
 * undici's connector with the policy applied on every new connection: IP literals are judged
 * directly (net.connect skips the lookup for them), names through `checkedLookup`.
 */
export function checkedConnector(
  policy: DestinationPolicy,
  opts: { timeoutMs?: number; lookupAll?: LookupAll } = {},
): buildConnector.connector {
  const connect = buildConnector({ timeout: opts.timeoutMs ?? 10_000, lookup: checkedLookup(policy, opts.lookupAll) });
  return (options, callback) => {
    const literal = classifyAddress(options.hostname);
    if (literal !== null && !addressAllowed(options.hostname, policy)) return callback(new DestinationRefused(), null);
    connect(options, callback);
  };
}

/** A dispatcher for requests to account-controlled URLs. It never follows redirects by itself. */
export function destinationAgent(policy: DestinationPolicy, opts: { timeoutMs?: number; lookupAll?: LookupAll } = {}): Agent {
  return new Agent({ connect: checkedConnector(policy, opts), connections: 64, keepAliveTimeout: 10_000 });
}

/** True when an error (or its cause chain) is a refusal by this policy. */
export function isDestinationRefusal(err: unknown): boolean {
  for (let e = err as { code?: string; cause?: unknown } | undefined, depth = 0; e && depth < 5; e = e.cause as typeof e, depth++) {
    if (e instanceof DestinationRefused || e.code === 'ERR_DESTINATION_NOT_ALLOWED') return true;
    if (e instanceof AggregateError && e.errors.some(isDestinationRefusal)) return true;
  }
  return false;
}
