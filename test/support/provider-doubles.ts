import {
  UnknownProvider,
  type ChatProvider,
  type ChatRequest,
  type OutboundSms,
  type Provider,
  type ProviderRegistry,
  type ProviderResult,
  type SentMessage,
  type SmsProvider,
} from '../../providers/index.js';
import type { OutboundRow } from '../../activities/messaging/messages.js';

// Doubles of the provider port (providers/types.ts) for activity unit tests: an SMS and a chat
// adapter that record each send and answer from a script, and a registry choosing between them as
// the real one does (the stored provider, else the channel type's default; UnknownProvider else).

export type SendAnswer = ProviderResult<SentMessage> | Error;

export interface SentCall {
  provider: 'sms' | 'chat';
  /** The SMS as handed over, or the chat request. */
  request: OutboundSms | ChatRequest;
  /** The idempotency key (the SMS's uid, the chat send's second argument). */
  key: string;
}

const ok = (providerMessageId: string): ProviderResult<SentMessage> => ({ ok: true, value: { providerMessageId } });
export const providerOk = ok;
export const providerFailure = (permanent: boolean, code: string, message: string, retryAfterSeconds?: number): ProviderResult<never> => ({
  ok: false,
  permanent,
  code,
  message,
  ...(retryAfterSeconds ? { retryAfterSeconds } : {}),
});

/** Answers each send with the next of `answers` (the last one repeats); an Error is thrown. */
export function providerDoubles(answers: SendAnswer[] = [ok('PM1')]) {
  const sent: SentCall[] = [];
  const answer = async (): Promise<ProviderResult<SentMessage>> => {
    const a = answers[Math.min(sent.length - 1, answers.length - 1)];
    if (a instanceof Error) throw a;
    return a;
  };
  const common = { webhooks: [], mapStatus: () => null, verifySignature: () => false } as const;
  const sms: SmsProvider = {
    ...common,
    key: 'sms-gateway',
    kind: 'sms',
    channelType: 'sms',
    statusesMayPrecedeSend: false,
    async send(msg) {
      sent.push({ provider: 'sms', request: msg, key: msg.uid });
      return answer();
    },
  };
  const chat: ChatProvider = {
    ...common,
    key: 'whatsapp-cloud',
    kind: 'chat',
    channelType: 'whatsapp',
    statusesMayPrecedeSend: true,
    buildPayload: () => ({}),
    async send(request, idempotencyKey) {
      sent.push({ provider: 'chat', request, key: idempotencyKey });
      return answer();
    },
  };
  const all: Provider[] = [sms, chat];
  const get = (key: string) => {
    const p = all.find((x) => x.key === key);
    if (!p) throw new UnknownProvider(`No provider adapter is registered as "${key}".`);
    return p;
  };
  const forChannel = (channelType: 'sms' | 'whatsapp', stored: string | null | undefined) => {
    const p = get(stored || (channelType === 'sms' ? 'sms-gateway' : 'whatsapp-cloud'));
    if (p.channelType !== channelType) throw new UnknownProvider(`Provider "${p.key}" does not send ${channelType} messages.`);
    return p;
  };
  const registry: ProviderRegistry = {
    all,
    get,
    forChannel,
    sms: (stored) => forChannel('sms', stored) as SmsProvider,
    chat: (stored) => forChannel('whatsapp', stored) as ChatProvider,
    catalogue: () => {
      throw new Error('no catalogue in this double');
    },
    chatGroups: () => {
      throw new Error('no chat groups in this double');
    },
    templates: () => {
      throw new Error('no templates in this double');
    },
    social: () => {
      throw new Error('no social publisher in this double');
    },
    payments: () => {
      throw new Error('no payment provider in this double');
    },
  };
  return { registry, sms, chat, sent };
}

/** An outbound message row as the send path loads it (OUTBOUND_COLUMNS). */
export const outboundRow = (over: Partial<OutboundRow> = {}): OutboundRow => ({
  id: '7',
  uid: 'msg_unit',
  status: 'queued',
  channel_type: 'sms',
  sender: 'ACME',
  recipient: '+447700900123',
  body: 'Your code is 1234',
  media_url: null,
  gateway_message_id: null,
  provider_request: null,
  provider: null,
  account_status: 'active',
  ...over,
});
