// The part of a request/response pair the hot provider routes use. Koa's context has it, and so does
// the plain node:http exchange below, which serves the busiest route (Twilio's create-message: one
// request per SMS) without Koa and the router; in a 100,000-message campaign those cost the
// simulator about as much CPU as the route itself (docs/benchmarks.md).
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface Exchange {
  req: IncomingMessage;
  state: Record<string, unknown>;
  params: Record<string, string>;
  status: number;
  body: unknown;
  get(field: string): string;
  set(field: string, value: string): void;
}

/** An Exchange over node:http for a route matched by hand; `send` writes what the handler set. */
export function plainExchange(req: IncomingMessage, res: ServerResponse, params: Record<string, string>): Exchange & { send(): void } {
  const headers: Record<string, string> = {};
  return {
    req,
    params,
    state: {},
    status: 404,
    body: undefined,
    get(field) {
      const v = req.headers[field.toLowerCase()];
      return v === undefined ? '' : Array.isArray(v) ? v.join(', ') : v;
    },
    set(field, value) {
      headers[field.toLowerCase()] = value;
    },
    send() {
      if (this.body === undefined || this.body === null) {
        res.writeHead(this.status, headers).end();
        return;
      }
      const text = typeof this.body === 'string' ? this.body : JSON.stringify(this.body);
      headers['content-type'] ??= typeof this.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8';
      headers['content-length'] = String(Buffer.byteLength(text));
      res.writeHead(this.status, headers).end(text);
    },
  };
}
