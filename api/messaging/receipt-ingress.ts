import type http from 'node:http';
import type { AppDeps } from '../http/app.js';
import { HttpError, asHttpError, v3ErrorBody } from '../http/errors.js';
import { verifyTwilioSignature } from '../../activities/providers/sms-gateway/client.js';
import { applySmsReceipt } from '../../services/messaging/receipts.js';
import { requestStarted, requestEnded } from '../../services/platform/load.js';

// SMS delivery receipts are the API's busiest request: two per message, thousands a second during a
// campaign. Koa and the router cost more than the receipt itself (bench/receipts.ts, docs/benchmarks.md),
// so the server answers this one path with plain node:http before handing anything else to Koa. The
// route stays in the registry (OpenAPI, the same contract) and both transports run receiveSmsStatus.

export const SMS_STATUS_PATH = '/providers/sms/status';

/**
 * The receipt itself: the Twilio signature over our public URL and the form parameters, then the
 * status move (group-committed; resolves once it is stored). `url` is the path and query as received.
 */
export async function receiveSmsStatus(deps: AppDeps, url: string, raw: Buffer, signature: string | undefined): Promise<void> {
  const params = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  if (!verifyTwilioSignature(deps.config.smsGatewayAuthToken, `${deps.config.publicBaseUrl}${url}`, params, signature)) {
    throw new HttpError(403, 'Invalid provider signature.');
  }
  const q = url.indexOf('?');
  const uid = q < 0 ? '' : (new URLSearchParams(url.slice(q + 1)).get('m') ?? '');
  await applySmsReceipt(deps, uid, params);
}

const isSmsStatus = (req: http.IncomingMessage) =>
  req.method === 'POST' && (req.url === SMS_STATUS_PATH || req.url!.startsWith(`${SMS_STATUS_PATH}?`));

/** A request listener for the receipt path; returns false (untouched) for every other request. */
export function smsReceiptIngress(deps: AppDeps) {
  const limit = deps.config.bodyLimitBytes;
  return (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    if (!isSmsStatus(req)) return false;
    const started = process.hrtime.bigint();
    requestStarted();
    const answer = (status: number, err?: HttpError) => {
      requestEnded();
      if (res.headersSent || res.destroyed) return;
      if (err) {
        const body = JSON.stringify(v3ErrorBody(err));
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
      } else {
        res.writeHead(status).end();
      }
      if (deps.log.isLevelEnabled('info')) {
        deps.log.info(
          {
            route: `POST ${SMS_STATUS_PATH}`,
            method: 'POST',
            status,
            ms: Math.round(Number(process.hrtime.bigint() - started) / 1e5) / 10,
          },
          'request',
        );
      }
    };
    const fail = (err: unknown) => {
      const refusal = asHttpError(err);
      if (refusal) return answer(refusal.status, refusal);
      deps.log.error({ err, route: `POST ${SMS_STATUS_PATH}` }, 'unhandled error');
      answer(500, new HttpError(500, 'Something went wrong on our side. The request may be retried.'));
    };
    const tooLarge = () => new HttpError(413, `The request body may not be larger than ${limit} bytes.`);
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      fail(tooLarge());
      req.resume();
      return true;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit && !done) {
        done = true;
        fail(tooLarge());
        req.resume();
        return;
      }
      if (!done) chunks.push(chunk);
    });
    req.on('error', (err) => {
      if (!done) {
        done = true;
        fail(new HttpError(400, 'The request could not be processed.'));
        deps.log.debug({ err }, 'receipt body aborted');
      }
    });
    req.on('end', () => {
      if (done) return;
      done = true;
      const signature = req.headers['x-twilio-signature'];
      receiveSmsStatus(deps, req.url!, Buffer.concat(chunks), typeof signature === 'string' ? signature : undefined).then(
        () => answer(204),
        fail,
      );
    });
    return true;
  };
}
