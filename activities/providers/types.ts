// What a provider adapter offers, one interface per provider kind (Novu's shape: one adapter per
// provider implementing its channel's interface, one central status vocabulary). Everything that
// is particular to a provider (its HTTP client, request payloads, webhook signatures, webhook
// parsing and status words) lives in the adapter's folder, activities/providers/<provider>/; the
// rest of the application speaks only these types and our own MessageStatus. The registry
// (./index.ts) picks the adapter by the value a channel stores in `channels.provider`.
import type { MessageStatus } from '../../domain/messaging/message-status.js';
import type { PreparedWhatsAppMessage } from '../../domain/messaging/whatsapp-message.js';
import type { ProviderResult } from './http.js';

export type { ProviderResult, ProviderFailure } from './http.js';

/** The value a channel stores in `channels.provider`. */
export type ProviderKey = 'sms-gateway' | 'whatsapp-cloud';
export type ProviderKind = 'sms' | 'chat';
/** The channel type of our messages an adapter serves. */
export type ChannelType = 'sms' | 'whatsapp';

// --- Webhooks --------------------------------------------------------------------------------------

/** A provider's webhook exactly as received: signatures cover the exact bytes and the exact URL. */
export interface WebhookRequest {
  /** Path and query as received, e.g. `/providers/sms/status?m=msg_…`. */
  url: string;
  /** Header names in lower case, as node:http gives them. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  rawBody: Buffer;
}

/** A provider's word on one of our outbound messages, already in our vocabulary. */
export interface StatusUpdate {
  type: 'status';
  /** Our message uid, when the provider echoes it back (the SMS callback URL carries it). */
  uid?: string;
  providerMessageId?: string;
  status: MessageStatus;
  errorMessage?: string;
}

/** A message a customer sent to one of our business numbers. */
export interface InboundMessage {
  type: 'inbound';
  channelType: ChannelType;
  /** How the business number is known to the provider: the E.164 number (SMS) or the phone-number id (chat). */
  businessNumber: { number?: string; phoneNumberId?: string };
  from: string;
  body: string;
  providerMessageId: string;
  mediaUrl?: string | null;
  mediaType?: string | null;
  metadata?: Record<string, unknown>;
}

export type ProviderEvent = StatusUpdate | InboundMessage;

/** How the provider expects a request to be answered. */
export interface WebhookAnswer {
  status: number;
  contentType?: string;
  body?: string;
}

/** One endpoint a provider calls: its path, how success is answered (and documented), how it is read. */
export interface WebhookEndpoint {
  method: 'GET' | 'POST';
  path: string;
  summary: string;
  /** The answer to a request whose events were applied; description and schema go to OpenAPI. */
  answer: WebhookAnswer & { description: string; schema: Record<string, unknown> };
  /** Query parameters, for the OpenAPI document. */
  query?: Record<string, unknown>;
  /** A signed notification (the signature has been verified): its events. Throws MalformedWebhook. */
  parse?(req: WebhookRequest): ProviderEvent[];
  /** An unsigned subscription handshake (Meta's hub.challenge): the answer, or null when refused. */
  handshake?(req: WebhookRequest): WebhookAnswer | null;
}

/** A webhook body that cannot be read at all. */
export class MalformedWebhook extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedWebhook';
  }
}

// --- Adapters --------------------------------------------------------------------------------------

export interface SentMessage {
  providerMessageId: string;
}

interface ProviderAdapter<K extends ProviderKind> {
  readonly key: ProviderKey;
  readonly kind: K;
  readonly channelType: ChannelType;
  /** The endpoints this provider posts to (served ahead of Koa by api/http/ingress.ts). */
  readonly webhooks: readonly WebhookEndpoint[];
  /**
   * Whether a status may name only the provider's message id and so arrive before the send's own
   * answer stored that id (it then waits in pending_receipts until the id is stored).
   */
  readonly statusesMayPrecedeSend: boolean;
  /** The provider's status word in ours; null for interim statuses that change nothing. */
  mapStatus(providerStatus: string): MessageStatus | null;
  /** Whether a webhook carries the provider's valid signature (exact bytes, headers, URL). */
  verifySignature(req: WebhookRequest): boolean;
  /** Where a sent message stands, asked when no status came; absent when the provider cannot say. */
  fetchStatus?(providerMessageId: string): Promise<ProviderResult<{ status: MessageStatus | null; errorMessage?: string }>>;
}

/** One stored outbound SMS as the adapter needs it. */
export interface OutboundSms {
  /** Our message uid: the status callback names it and it is the provider idempotency key. */
  uid: string;
  to: string;
  from: string | null;
  body: string;
  mediaUrl: string | null;
}

export interface SmsProvider extends ProviderAdapter<'sms'> {
  /** Builds the provider request for one message and sends it (idempotent on the uid). */
  send(msg: OutboundSms): Promise<ProviderResult<SentMessage>>;
}

/** The provider request of one chat message, built when the message is accepted and stored with it. */
export type ChatRequest = Record<string, unknown>;

export interface ChatSender {
  /** The business number's id at the provider (Meta's phone-number id). */
  providerPhoneNumberId: string;
}

export interface ChatProvider extends ProviderAdapter<'chat'> {
  /** The request one recipient's message is sent with (stored on the record until dispatch). */
  buildPayload(from: ChatSender, to: string, message: PreparedWhatsAppMessage, replyTo: string | null): ChatRequest;
  send(request: ChatRequest, idempotencyKey: string): Promise<ProviderResult<SentMessage>>;
}

export type Provider = SmsProvider | ChatProvider;
