import http from 'node:http';
import { after } from 'node:test';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
}

/**
 * A customer's webhook receiver on 127.0.0.1 (port 0): records every request and answers with the
 * next status of `answers` (the last one repeats), or with `answer()` when given.
 */
export async function startReceiver(answers: number[] = [200]) {
  const got: Received[] = [];
  let plan = [...answers];
  let delayMs = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      got.push({ at: Date.now(), headers: req.headers, body, json });
      const status = plan.length > 1 ? plan.shift()! : plan[0];
      setTimeout(() => {
        res.writeHead(status, { 'content-type': 'text/plain' });
        res.end(status < 300 ? 'ok' : `refused with ${status}`);
      }, delayMs);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    got,
    answer(statuses: number[]) {
      plan = [...statuses];
    },
    slow(ms: number) {
      delayMs = ms;
    },
    byEvent: (eventId: string) => got.filter((r) => r.headers['webhook-id'] === eventId || r.json?.id === eventId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A `startReceiver` for one test file: every receiver it starts is closed when the file's tests are
 * done (node:test's `after`).
 */
export function receiversOfThisFile(): (answers?: number[]) => ReturnType<typeof startReceiver> {
  const started: Array<{ close(): Promise<void> }> = [];
  after(async () => {
    for (const r of started) await r.close();
  });
  return async (answers) => {
    const r = await startReceiver(answers);
    started.push(r);
    return r;
  };
}
