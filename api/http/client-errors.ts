import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { HttpError, v3ErrorBody } from './errors.js';

/**
 * The request line and headers one request may carry: a records filter travels URL-encoded in the
 * query string (40 leaves with their values, a cursor beside it), which Node's default of 16 KiB
 * refuses long before the contract's own limits would.
 */
export const MAX_HEADER_BYTES = 64 * 1024;

/**
 * What Node's HTTP parser refuses before any route sees it (a request line and headers over
 * MAX_HEADER_BYTES, a request that is not HTTP) is answered in the v3 envelope like every other
 * refusal, instead of Node's bare 431 or 400 with no body, and the connection is closed.
 */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const e =
      err.code === 'HPE_HEADER_OVERFLOW'
        ? new HttpError(431, `The request line and headers exceed ${MAX_HEADER_BYTES} bytes.`)
        : new HttpError(400, 'The request is not valid HTTP.');
    const body = JSON.stringify(v3ErrorBody(e));
    socket.end(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
