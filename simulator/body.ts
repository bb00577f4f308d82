// Request body reading without a body-parser dependency. The raw bytes are kept because providers
// are judged on exactly what was sent (inspection shows it), and form fields may repeat (MediaUrl).
import type { Exchange } from './exchange.js';

const LIMIT_BYTES = 5 * 1024 * 1024;

export class BodyError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function readRaw(ctx: Exchange): Promise<Buffer> {
  const cached = (ctx.state as { rawBody?: Buffer }).rawBody;
  if (cached) return Promise.resolve(cached);
  // Plain stream events rather than `for await`: every send reads a body, and the async iterator
  // costs a promise and an iterator result per chunk.
  const req = ctx.req;
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    let single: Buffer | null = null;
    let chunks: Buffer[] | null = null;
    let size = 0;
    const onData = (buf: Buffer): void => {
      size += buf.length;
      if (size > LIMIT_BYTES) {
        cleanup();
        req.resume();
        reject(new BodyError('request body too large', 413));
        return;
      }
      if (single === null && chunks === null) single = buf;
      else (chunks ??= [single as Buffer]).push(buf);
    };
    const onEnd = (): void => {
      cleanup();
      const raw = chunks ? Buffer.concat(chunks, size) : (single ?? Buffer.alloc(0));
      (ctx.state as { rawBody?: Buffer }).rawBody = raw;
      resolve(raw);
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

export type FormFields = Record<string, string | string[]>;

/** Repeated keys become arrays, mirroring how Twilio reads MediaUrl. */
export async function readForm(ctx: Exchange): Promise<FormFields> {
  const raw = await readRaw(ctx);
  const out: FormFields = {};
  // URLSearchParams (native in Node 24) measured faster here than node:querystring.
  for (const [key, value] of new URLSearchParams(raw.toString('utf8'))) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else out[key] = Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Returns the parsed JSON, or throws BodyError(400) for malformed input. An empty body is `{}`. */
export async function readJson(ctx: Exchange): Promise<unknown> {
  const raw = await readRaw(ctx);
  const text = raw.toString('utf8').trim();
  if (text === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError('request body is not valid JSON', 400);
  }
}

export function first(fields: FormFields, key: string): string | undefined {
  const v = fields[key];
  return Array.isArray(v) ? v[0] : v;
}

export function all(fields: FormFields, key: string): string[] {
  const v = fields[key];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}
