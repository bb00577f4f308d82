import http from 'node:http';
import { after } from 'node:test';
import type { AddressInfo } from 'node:net';

export interface Received {
  at: number;
  /** Path and query as requested. */
  url: string;
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
  /** Called after each request is recorded: the pending `waitFor`s look again. */
  const onRequest = new Set<() => void>();
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
      got.push({ at: Date.now(), url: req.url ?? '', headers: req.headers, body, json });
      for (const look of [...onRequest]) look();
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
    /**
     * Resolves with what `pick` finds in the requests got so far, as soon as it finds something (null or
     * undefined: nothing yet): looked for at once and again on each request, never on a timer, so a
     * loaded machine only makes it later. `timeoutMs` is a deadline for a request that never comes,
     * not a pace: keep it generous.
     */
    waitFor<T>(pick: (got: Received[]) => T | null | undefined, what = 'a matching request', timeoutMs = 30_000): Promise<T> {
      return new Promise<T>((resolve, reject) => {
        const look = (): void => {
          let found: T | null | undefined;
          try {
            found = pick(got);
          } catch (err) {
            done();
            reject(err instanceof Error ? err : new Error(String(err)));
            return;
          }
          if (found === null || found === undefined) return;
          done();
          resolve(found);
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`the receiver got no ${what} within ${timeoutMs} ms`));
        }, timeoutMs);
        const done = (): void => {
          clearTimeout(timer);
          onRequest.delete(look);
        };
        onRequest.add(look);
        look();
      });
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
