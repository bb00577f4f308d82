// What happens after Twilio accepts a message (status callbacks) and what a handset reply looks
// like (inbound webhook). Both are signed exactly as Twilio signs them.
import type { Router } from '@koa/router';
import { readJson } from './body.js';
import type { Generation } from './lifecycle.js';
import { twilioForm } from './signing.js';
import type { SimState, SmsRecord } from './state.js';
import { digitsOf, isHttpUrl, isMsisdn, isUndeliverable, twilioSid } from './util.js';
import { deliver } from './webhooks.js';

// Twilio's default opt-out handling: these keywords block or unblock the sender for that number.
const STOP_WORDS = ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT'];
const START_WORDS = ['START', 'YES', 'UNSTOP'];

// Twilio assigns the sender from the Messaging Service pool when none was given.
const POOL_NUMBER = '+15005550006';

function setStatus(m: SmsRecord, status: string): void {
  m.status = status;
  m.updatedAt = Date.now();
  m.history.push({ status, at: new Date(m.updatedAt).toISOString() });
}

/** queued → sent → delivered | undelivered, one step per receiptDelayMs; no callback for the initial status. */
export function startSmsTimeline(state: SimState, m: SmsRecord): void {
  state.life.spawn(`sms:${m.sid}`, async (gen) => {
    if (!(await gen.sleep(state.config.receiptDelayMs))) return;
    m.from ??= POOL_NUMBER;
    m.sentAt = Date.now();
    setStatus(m, 'sent');
    // `no_receipt` models a carrier that never reports back: the message stays "sent" forever.
    if (m.noReceipt) return;
    await postStatus(state, m, gen);
    if (!(await gen.sleep(state.config.receiptDelayMs))) return;
    if (isUndeliverable(m.to)) {
      m.errorCode = 30003;
      m.errorMessage = 'Unreachable destination handset';
      setStatus(m, 'undelivered');
    } else {
      setStatus(m, 'delivered');
    }
    await postStatus(state, m, gen);
  });
}

async function postStatus(state: SimState, m: SmsRecord, gen: Generation): Promise<void> {
  if (!m.statusCallback) return;
  const params: Record<string, string> = {
    MessageSid: m.sid,
    SmsSid: m.sid,
    MessageStatus: m.status,
    SmsStatus: m.status,
    AccountSid: m.accountSid,
    From: m.from ?? '',
    To: m.to,
    ApiVersion: '2010-04-01',
  };
  if (m.messagingServiceSid) params.MessagingServiceSid = m.messagingServiceSid;
  if (m.errorCode !== null) params.ErrorCode = String(m.errorCode);
  if (m.status === 'delivered' || m.status === 'undelivered') params.RawDlrDoneDate = rawDlrDate(new Date());
  const request = twilioForm(state.options.smsAuthToken, m.statusCallback, params);
  await deliver(state, { provider: 'sms', kind: 'sms.status', messageId: m.sid, url: m.statusCallback, request }, gen);
}

/** YYMMDDhhmm in UTC, the carrier DLR "done date" Twilio forwards. */
function rawDlrDate(d: Date): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(d.getUTCFullYear() % 100)}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}${p(d.getUTCHours())}${p(d.getUTCMinutes())}`;
}

/** POST /_sim/sms/inbound {from, to, body, mediaUrls?, url?} → a signed Twilio inbound webhook. */
export function registerSmsInbound(router: Router, state: SimState): void {
  router.post('/sms/inbound', async (ctx) => {
    const input = (await readJson(ctx)) as Record<string, unknown>;
    const from = typeof input.from === 'string' ? input.from : '';
    const to = typeof input.to === 'string' ? input.to : '';
    const text = typeof input.body === 'string' ? input.body : '';
    const mediaUrls = Array.isArray(input.mediaUrls) ? input.mediaUrls.filter((u): u is string => typeof u === 'string') : [];
    if (!isMsisdn(from) || to === '') {
      ctx.status = 400;
      ctx.body = { error: 'from must be a phone number (8-15 digits, optional +) and to is required' };
      return;
    }
    const url = typeof input.url === 'string' ? input.url : state.config.smsInboundUrl;
    if (!url || !isHttpUrl(url)) {
      ctx.status = 409;
      ctx.body = { error: 'no SMS inbound URL: set smsInboundUrl via POST /_sim/config or pass url' };
      return;
    }
    const sid = twilioSid('SM');
    const params: Record<string, string> = {
      MessageSid: sid,
      SmsSid: sid,
      SmsMessageSid: sid,
      AccountSid: state.options.smsAccountSid,
      From: from.startsWith('+') ? from : `+${from}`,
      To: to,
      Body: text,
      NumMedia: String(mediaUrls.length),
      NumSegments: '1',
      SmsStatus: 'received',
      ApiVersion: '2010-04-01',
    };
    mediaUrls.forEach((u, i) => {
      params[`MediaUrl${i}`] = u;
      params[`MediaContentType${i}`] = 'image/jpeg';
    });
    const keyword = text.trim().toUpperCase();
    if (STOP_WORDS.includes(keyword)) {
      state.config.optOuts.add(digitsOf(from));
      params.OptOutType = 'STOP';
    } else if (START_WORDS.includes(keyword)) {
      state.config.optOuts.delete(digitsOf(from));
      params.OptOutType = 'START';
    }
    const request = twilioForm(state.options.smsAuthToken, url, params);
    const record = await deliver(state, { provider: 'sms', kind: 'sms.inbound', messageId: sid, url, request });
    ctx.body = {
      messageSid: sid,
      url,
      delivered: record.delivered,
      statusCode: record.statusCode,
      attempts: record.attempts.length,
      params,
    };
  });
}
