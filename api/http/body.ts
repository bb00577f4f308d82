import type http from 'node:http';
import type Koa from 'koa';
import { HttpError } from './errors.js';
import { decodeUtf8 } from '../../domain/platform/utf8.js';

/**
 * Deeper JSON than this is refused before it is parsed: no request of the contract nests more than a
 * few levels, and thousands of levels overflow the recursive code that walks a value later
 * (JSON.stringify into jsonb, schema validation) into a 500.
 */
export const MAX_JSON_DEPTH = 64;

const tooLarge = (limit: number) => new HttpError(413, `The request body may not be larger than ${limit} bytes.`);

/** How much of a refused upload is read and discarded before the connection is cut. */
const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
/** How long a refused upload may stall before the connection is cut. */
const DISCARD_STALL_MS = 30_000;

/**
 * The client of a refused upload may still be sending. The answer goes out at once (HTTP clients
 * read it while they upload); the rest of the upload is then read and discarded, and the
 * connection closed (FIN) once the request has ended. Only a client that goes on past
 * DISCARD_LIMIT_BYTES, or stalls, is cut off (destroyed). Cutting off sooner is what goes wrong:
 * closing with upload bytes unread makes the kernel answer with a reset, and a reset discards the
 * 413 the client had received but not yet read (seen as "other side closed" under load, when a
 * two-second timer fired before a 1 MB upload was drained). Never closing (as before) left
 * clients waiting on a connection that carried nothing more.
 */
export function closeAfterAnswer(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.once('finish', () => {
    const socket = req.socket;
    if (req.complete) return void socket.end();
    let discarded = 0;
    const cut = () => socket.destroy();
    let stall = setTimeout(cut, DISCARD_STALL_MS).unref();
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_LIMIT_BYTES) return cut();
      clearTimeout(stall);
      stall = setTimeout(cut, DISCARD_STALL_MS).unref();
    });
    req.once('end', () => {
      clearTimeout(stall);
      socket.end();
    });
    req.resume();
  });
}

/** Reads the raw body with a hard size cap, so an oversized upload is refused before it is buffered. */
export async function readRawBody(ctx: Koa.Context, limit: number): Promise<Buffer> {
  if (Number(ctx.get('content-length') || 0) > limit) {
    closeAfterAnswer(ctx.req, ctx.res);
    throw tooLarge(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  // Not destroyed on an early return: the socket must stay up to carry the 413.
  for await (const chunk of ctx.req.iterator({ destroyOnReturn: false })) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      closeAfterAnswer(ctx.req, ctx.res);
      throw tooLarge(limit);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The media type of a request, compared without case and parameters (`Application/JSON; charset=UTF-8` is JSON). */
export function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0].trim().toLowerCase();
}

/** True when some array or object in the JSON text nests deeper than `max` (strings are skipped, escapes honoured). */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** A request body as text: 400 for bytes that are not UTF-8 (never stored as replacement characters). */
export function bodyText(raw: Uint8Array): string {
  const text = decodeUtf8(raw);
  if (text === null) throw new HttpError(400, 'The request body is not valid UTF-8.');
  return text;
}

/** JSON text to a value: 400 for text that is not JSON or nests deeper than MAX_JSON_DEPTH. */
export function parseJsonText(text: string): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH))
    throw new HttpError(400, `The request body may not nest deeper than ${MAX_JSON_DEPTH} levels.`);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.');
  }
}

/** The body of a JSON endpoint: JSON (or a +json type) or no declared type; forms and anything else are 415. */
export function parseBody(ctx: Koa.Context, raw: Buffer): unknown {
  if (raw.length === 0) return {};
  const type = mediaTypeOf(ctx.get('content-type'));
  if (type && type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(415, 'Send the request body as application/json.');
  }
  return parseJsonText(bodyText(raw));
}
