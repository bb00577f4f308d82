// Twilio Programmable Messaging, as far as our adapter uses it: create a message, read it back.
// Shapes follow notes §4.1 so the adapter can be pointed at api.twilio.com unchanged.
import { Router } from '@koa/router';
import type { Exchange } from './exchange.js';
import { all, first, readForm } from './body.js';
import { segmentInfo } from './segments.js';
import { startSmsTimeline } from './sms-receipts.js';
import type { SimState, SmsRecord } from './state.js';
import { digitsOf, headersOfInterest, isHttpUrl, isMsisdn, rfc2822, twilioSid } from './util.js';

const API = '/2010-04-01/Accounts/:accountSid';

export function twilioError(ctx: Exchange, status: number, code: number, message: string): void {
  ctx.status = status;
  ctx.body = { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status };
}

/** Twilio's HTTP status for a given error code, for injected `error` faults. */
function twilioHttpStatus(code: number): number {
  if (code === 20003) return 401;
  if (code === 20404) return 404;
  if (code === 20429) return 429;
  if (code >= 20500 && code < 20600) return code - 20000;
  return 400;
}

export function smsRouter(state: SimState): Router {
  const r = new Router({ prefix: '/sms' });

  r.post(`${API}/Messages.json`, (ctx) => createMessage(ctx, state));

  r.get(`${API}/Messages/:messageSid.json`, (ctx) => {
    if (!authorized(ctx, state)) return twilioError(ctx, 401, 20003, 'Authenticate');
    const record = state.sms.bySid.get(ctx.params.messageSid ?? '');
    if (!record) return twilioError(ctx, 404, 20404, `The requested resource ${ctx.path.replace(/^\/sms/, '')} was not found`);
    ctx.body = messageJson(record);
  });

  return r;
}

/** The create-message path, matched by hand for the plain node:http fast path (see exchange.ts). */
export const CREATE_MESSAGE_PATH = /^\/sms\/2010-04-01\/Accounts\/([^/?]+)\/Messages\.json(?:\?.*)?$/;

/** POST /2010-04-01/Accounts/{AccountSid}/Messages.json: validate like Twilio, record, start the receipts. */
export async function createMessage(ctx: Exchange, state: SimState): Promise<void> {
  if (!authorized(ctx, state)) return twilioError(ctx, 401, 20003, 'Authenticate');
  const form = await readForm(ctx);
  const to = first(form, 'To') ?? null;

  // A repeated token is the same logical send: answer with the original and count the repeat.
  const token = ctx.get('i-twilio-idempotency-token') || null;
  const existing = token ? state.sms.byToken.get(token) : undefined;
  if (existing) {
    existing.duplicates += 1;
    ctx.status = 201;
    ctx.body = messageJson(existing);
    return;
  }

  const reject = (status: number, code: number, message: string, fault: SimFault = null): void => {
    state.rejections.push({
      seq: state.nextSeq(),
      provider: 'sms',
      at: new Date().toISOString(),
      to,
      httpStatus: status,
      code,
      message,
      fault,
    });
    twilioError(ctx, status, code, message);
  };

  const fault = state.faults.take('sms', to);
  if (fault && fault.kind !== 'no_receipt') {
    if (fault.kind === 'http_500') return reject(500, fault.code ?? 20500, fault.message ?? 'Internal Server Error', fault.kind);
    if (fault.kind === 'timeout') {
      await state.life.sleep(state.options.timeoutFaultMs);
      return reject(504, 20504, fault.message ?? 'Gateway Timeout', fault.kind);
    }
    if (fault.kind === 'http_429' || fault.retryAfter !== null) ctx.set('Retry-After', String(fault.retryAfter ?? 1));
    if (fault.kind === 'http_429') return reject(429, fault.code ?? 20429, fault.message ?? 'Too Many Requests', fault.kind);
    const code = fault.code ?? 30001;
    return reject(twilioHttpStatus(code), code, fault.message ?? `Simulated error ${code}`, fault.kind);
  }

  const from = first(form, 'From') ?? null;
  const serviceSid = first(form, 'MessagingServiceSid') ?? null;
  const body = first(form, 'Body') ?? '';
  const mediaUrls = all(form, 'MediaUrl');
  const statusCallback = first(form, 'StatusCallback') ?? null;

  if (!to) return reject(400, 21604, "A 'To' phone number is required.");
  if (!isMsisdn(to)) return reject(400, 21211, `The 'To' number ${to} is not a valid phone number.`);
  if (!from && !serviceSid) return reject(400, 21603, "A 'From' phone number is required.");
  if (from && !isSender(from)) {
    return reject(400, 21212, `The 'From' number ${from} is not a valid phone number, shortcode, or alphanumeric sender ID.`);
  }
  if (!from && serviceSid && !/^MG[0-9a-f]{32}$/.test(serviceSid)) {
    return reject(400, 21701, `The Messaging Service Sid ${serviceSid} is invalid.`);
  }
  if (body === '' && mediaUrls.length === 0) return reject(400, 21602, 'Message body is required.');
  // Code points never outnumber UTF-16 units, so only long bodies need counting.
  if (body.length > 1600 && Array.from(body).length > 1600)
    return reject(400, 21617, 'The concatenated message body exceeds the 1600 character limit.');
  if (mediaUrls.some((u) => !isHttpUrl(u))) return reject(400, 21620, 'Invalid media URL(s).');
  if (statusCallback && !isHttpUrl(statusCallback)) return reject(400, 21609, 'Invalid StatusCallback url.');
  if (state.config.optOuts.has(digitsOf(to))) return reject(400, 21610, 'Attempt to send to unsubscribed recipient');

  const now = Date.now();
  const seg = segmentInfo(body);
  const record: SmsRecord = {
    seq: state.nextSeq(),
    sid: twilioSid('SM'),
    accountSid: state.options.smsAccountSid,
    to,
    from,
    messagingServiceSid: serviceSid,
    body,
    mediaUrls,
    statusCallback,
    // Without a fixed From, Twilio first "accepts" the message and picks a sender later.
    status: from ? 'queued' : 'accepted',
    errorCode: null,
    errorMessage: null,
    segments: seg.segments,
    encoding: seg.encoding,
    idempotencyToken: token,
    duplicates: 0,
    noReceipt: fault?.kind === 'no_receipt',
    request: { headers: headersOfInterest(ctx), body: form },
    history: [{ status: from ? 'queued' : 'accepted', at: new Date(now).toISOString() }],
    createdAt: now,
    sentAt: null,
    updatedAt: now,
  };
  state.sms.messages.push(record);
  state.sms.bySid.set(record.sid, record);
  if (token) state.sms.byToken.set(token, record);
  state.log.info({ sid: record.sid, to, segments: record.segments }, 'sms accepted');
  startSmsTimeline(state, record);
  ctx.status = 201;
  ctx.body = messageJson(record);
}

type SimFault = SimState['rejections'][number]['fault'];

// The exact header our adapter sends, so the common case is one string comparison, not a decode.
const expectedAuth = new WeakMap<SimState, string>();

function authorized(ctx: Exchange, state: SimState): boolean {
  const header = ctx.get('authorization');
  const { smsAccountSid, smsAuthToken } = state.options;
  let expected = expectedAuth.get(state);
  if (expected === undefined) {
    expected = `Basic ${Buffer.from(`${smsAccountSid}:${smsAuthToken}`, 'utf8').toString('base64')}`;
    expectedAuth.set(state, expected);
  }
  if (header === expected) return ctx.params.accountSid === smsAccountSid;
  if (!/^basic /i.test(header)) {
    ctx.set('WWW-Authenticate', 'Basic realm="Twilio API"');
    return false;
  }
  const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
  const sep = decoded.indexOf(':');
  const user = decoded.slice(0, sep);
  const pass = decoded.slice(sep + 1);
  return sep > 0 && user === smsAccountSid && pass === smsAuthToken && ctx.params.accountSid === smsAccountSid;
}

/** E.164 long numbers, short codes, or alphanumeric sender ids (≤ 11 chars, at least one letter). */
function isSender(from: string): boolean {
  return isMsisdn(from) || /^\d{3,6}$/.test(from) || (/^[A-Za-z0-9 ]{1,11}$/.test(from) && /[A-Za-z]/.test(from));
}

export function messageJson(m: SmsRecord): Record<string, unknown> {
  const uri = `/2010-04-01/Accounts/${m.accountSid}/Messages/${m.sid}`;
  return {
    account_sid: m.accountSid,
    api_version: '2010-04-01',
    body: m.body,
    date_created: rfc2822(m.createdAt),
    date_sent: m.sentAt === null ? null : rfc2822(m.sentAt),
    date_updated: rfc2822(m.updatedAt),
    direction: 'outbound-api',
    error_code: m.errorCode,
    error_message: m.errorMessage,
    from: m.from,
    messaging_service_sid: m.messagingServiceSid,
    num_media: String(m.mediaUrls.length),
    num_segments: String(m.segments),
    price: m.sentAt === null ? null : (-0.0079 * m.segments).toFixed(5),
    price_unit: 'USD',
    sid: m.sid,
    status: m.status,
    subresource_uris: { media: `${uri}/Media.json` },
    to: m.to,
    uri: `${uri}.json`,
  };
}
