// Graph API error envelope and the field checks that produce it. Validation code throws
// GraphProblem so the first offending field ends the request, as Meta reports one error at a time.
import { randomBytes } from 'node:crypto';

const TITLES: Record<number, string> = {
  2: 'Service temporarily unavailable',
  100: 'Invalid parameter',
  130429: 'Rate limit hit',
  131000: 'Something went wrong',
  131008: 'Required parameter is missing',
  131009: 'Parameter value is not valid',
  131026: 'Message undeliverable',
  131047: 'Re-engagement message',
  131056: '(Business Account, Consumer Account) pair rate limit hit',
  132000: 'Number of parameters does not match the expected number of params',
  132001: 'Template name does not exist in the translation',
  132015: 'Template is paused',
  132016: 'Template is disabled',
};

// Only 130429's subcode appears in Meta's own example; others are left out rather than invented.
const SUBCODES: Record<number, number> = { 130429: 2494055 };

/** HTTP status Meta pairs with each code (notes §1.6). */
export function graphHttpStatus(code: number): number {
  if (code === 0 || code === 190) return 401;
  if ([3, 10, 131005, 131031, 368].includes(code) || (code >= 200 && code <= 299)) return 403;
  if ([130429, 131048, 131056].includes(code)) return 429;
  if ([1, 2, 131000].includes(code)) return 500;
  if (code === 132001) return 404;
  return 400;
}

export function graphTitle(code: number): string {
  return TITLES[code] ?? 'Simulated error';
}

export class GraphProblem extends Error {
  readonly httpStatus: number;
  constructor(
    readonly code: number,
    readonly details: string,
    readonly title: string = graphTitle(code),
  ) {
    super(`(#${code}) ${title}: ${details}`);
    this.httpStatus = graphHttpStatus(code);
  }
}

export function graphEnvelope(code: number, details: string, title: string = graphTitle(code)): { error: Record<string, unknown> } {
  const fbtrace_id = randomBytes(12).toString('base64url');
  // Token errors come from the Graph layer itself and carry no WhatsApp error_data.
  if (code === 190) {
    return { error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code, fbtrace_id } };
  }
  const error: Record<string, unknown> = {
    message: `(#${code}) ${title}`,
    type: 'OAuthException',
    code,
    error_data: { messaging_product: 'whatsapp', details },
    fbtrace_id,
  };
  if (SUBCODES[code] !== undefined) error.error_subcode = SUBCODES[code];
  return { error };
}

export const missing = (path: string): GraphProblem => new GraphProblem(131008, `Parameter '${path}' is required.`);
export const invalid = (details: string): GraphProblem => new GraphProblem(131009, details);
export const badParam = (details: string): GraphProblem => new GraphProblem(100, details);

export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Required (or optional) object member. */
export function obj(parent: Record<string, unknown>, key: string, path: string, required = true): Record<string, unknown> | undefined {
  const v = parent[key];
  if (v === undefined || v === null) {
    if (required) throw missing(path);
    return undefined;
  }
  if (!isObj(v)) throw badParam(`Param ${path} must be a JSON object.`);
  return v;
}

/** String member with Meta's character limits (counted in code points, as Meta counts characters). */
export function str(
  parent: Record<string, unknown>,
  key: string,
  path: string,
  max: number,
  opts: { required?: boolean; min?: number } = {},
): string | undefined {
  const v = parent[key];
  const { required = true, min = 1 } = opts;
  if (v === undefined || v === null) {
    if (required) throw missing(path);
    return undefined;
  }
  if (typeof v !== 'string') throw badParam(`Param ${path} must be a string.`);
  const len = Array.from(v).length;
  if (len < min || len > max) throw invalid(`Param ${path} must be between ${min} and ${max} characters long, got ${len}.`);
  return v;
}

export function arr(parent: Record<string, unknown>, key: string, path: string, min: number, max: number): unknown[] {
  const v = parent[key];
  if (v === undefined || v === null) throw missing(path);
  if (!Array.isArray(v)) throw badParam(`Param ${path} must be an array.`);
  if (v.length < min || v.length > max) throw invalid(`Param ${path} must have between ${min} and ${max} elements, got ${v.length}.`);
  return v;
}

export function httpUrl(parent: Record<string, unknown>, key: string, path: string): string {
  const v = str(parent, key, path, 2000) as string;
  let ok = false;
  try {
    ok = ['http:', 'https:'].includes(new URL(v).protocol);
  } catch {
    ok = false;
  }
  if (!ok) throw invalid(`Param ${path} must be a valid http(s) URL.`);
  return v;
}

/** A media object names exactly one source: a link Meta downloads itself, or a previously uploaded id. */
export function validateMedia(media: Record<string, unknown>, path: string, allowCaption = true): void {
  const kind = path.split('.').pop() ?? path;
  const hasLink = media.link !== undefined;
  const hasId = media.id !== undefined;
  if (!hasLink && !hasId) throw missing(`${path}.link or ${path}.id`);
  if (hasLink && hasId) throw badParam(`Param ${path} must have either link or id, not both.`);
  if (hasLink) httpUrl(media, 'link', `${path}.link`);
  else str(media, 'id', `${path}.id`, 128);
  if (media.caption !== undefined) {
    if (!allowCaption || kind === 'audio' || kind === 'sticker') throw badParam(`Param ${path}.caption is not supported for ${kind}.`);
    str(media, 'caption', `${path}.caption`, 1024);
  }
  if (media.filename !== undefined) str(media, 'filename', `${path}.filename`, 240);
}
