import type Koa from 'koa';
import { HttpError } from './errors.js';

/** Reads the raw body with a hard size cap, so an oversized upload is refused before it is buffered. */
export async function readRawBody(ctx: Koa.Context, limit: number): Promise<Buffer> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new HttpError(413, `The request body may not be larger than ${limit} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `The request body may not be larger than ${limit} bytes.`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

export function parseBody(ctx: Koa.Context, raw: Buffer): unknown {
  if (raw.length === 0) return {};
  const type = ctx.request.type;
  const text = raw.toString('utf8');
  if (type === 'application/x-www-form-urlencoded') return Object.fromEntries(new URLSearchParams(text));
  if (type && type !== 'application/json' && !type.endsWith('+json')) {
    throw new HttpError(415, 'Send the request body as application/json.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'The request body is not valid JSON.');
  }
}
