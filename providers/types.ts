// What a provider adapter offers, one interface per provider kind (Novu's shape: one adapter per
// provider implementing its channel's interface, one central status vocabulary). Everything that
// is particular to a provider (its HTTP client, request payloads, webhook signatures, webhook
// parsing and status words) lives in the adapter's folder, providers/<provider>/; the
// rest of the application speaks only these types and our own MessageStatus. The registry
// (./index.ts) picks the adapter by the value a channel stores in `channels.provider`.
import type { MessageStatus } from '../domain/messaging/message-status.js';
import type { PreparedWhatsAppMessage } from '../domain/messaging/whatsapp-message.js';
import type { ProviderResult } from './http.js';
import type { Availability, Condition } from '../domain/catalogues/vocabulary.js';

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

/** One line of a chat order as the customer sent it: the price in major units, as the provider shows it. */
export interface ChatOrderItem {
  retailerId: string;
  quantity: number;
  /** Major units (30 = 30.00); null when the provider sent none that reads as a number. */
  itemPrice: number | null;
  currency: string | null;
}

/**
 * A cart a customer sent from the provider's catalogue (WhatsApp's `order` message): an inbound
 * message like any other (it opens the window) that also carries the order.
 */
export interface ChatOrderMessage extends Omit<InboundMessage, 'type'> {
  type: 'order';
  order: {
    /** The provider's catalogue id (our catalogues.meta_catalogue_id). */
    catalogueId: string;
    text: string | null;
    items: ChatOrderItem[];
  };
}

export type ProviderEvent = StatusUpdate | InboundMessage | ChatOrderMessage;

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

// --- Commerce catalogue ------------------------------------------------------------------------------

/** One of our products as a platform catalogue needs it (our row, our words; prices in hundredths). */
export interface CatalogueItemSource {
  /** Our shop's id: the item's link is the product's page in that shop. */
  shopId: number;
  sku: string;
  name: string;
  description: string | null;
  price: number;
  salePrice: number | null;
  currency: string;
  imageUrl: string | null;
  availability: Availability;
  condition: Condition | null;
  brand: string | null;
  category: string | null;
  productType: string | null;
  /** Units a customer may buy (inventory less reserved); null = not tracked. */
  available: number | null;
}

/** One request of a batch call, in the provider's shape; `retailerId` is our sku. */
export interface CatalogueItemRequest {
  method: 'CREATE' | 'UPDATE' | 'DELETE';
  retailerId: string;
  data: Record<string, unknown>;
}

export interface CatalogueItemProblem {
  retailerId: string;
  message: string;
}

/** Where one batch call stands: per-item errors (that item not stored) and warnings, once finished. */
export interface CatalogueBatchStatus {
  finished: boolean;
  errors: CatalogueItemProblem[];
  warnings: CatalogueItemProblem[];
}

/** A platform's copy of one product, read back in our words (prices parsed into hundredths). */
export interface PlatformItem {
  /** The provider's product id (our meta_product_id / platform_item_id). */
  providerId: string;
  retailerId: string;
  name: string | null;
  description: string | null;
  price: number | null;
  salePrice: number | null;
  currency: string | null;
  availability: string | null;
  condition: string | null;
  brand: string | null;
  category: string | null;
  productType: string | null;
  imageUrl: string | null;
}

/**
 * The chat provider's commerce catalogue (Meta's, behind WhatsApp, Facebook and Instagram shops):
 * one provider catalogue per shop, written through an asynchronous batch API whose handles are
 * polled. Refusals are `permanent` ProviderResults, throttles and outages retryable ones.
 */
export interface CatalogueProvider {
  readonly key: ProviderKey;
  /** Requests one batch call may carry (Meta: 5,000). */
  readonly maxRequestsPerBatch: number;
  createCatalogue(input: { name: string; vertical?: string | null }): Promise<ProviderResult<{ catalogueId: string }>>;
  /** Creates the item when absent, else replaces the fields sent (a field we do not hold is cleared). */
  upsertRequest(item: CatalogueItemSource): CatalogueItemRequest;
  deleteRequest(retailerId: string): CatalogueItemRequest;
  /** One batch call (at most maxRequestsPerBatch requests): the handles to poll. */
  sendItems(catalogueId: string, requests: readonly CatalogueItemRequest[]): Promise<ProviderResult<{ handles: string[] }>>;
  batchStatus(catalogueId: string, handle: string): Promise<ProviderResult<CatalogueBatchStatus>>;
  /** One keyset page of the catalogue's items; `after` of the answer is absent on the last page. */
  listItems(
    catalogueId: string,
    page: { after?: string; limit: number; retailerIds?: readonly string[] },
  ): Promise<ProviderResult<{ items: PlatformItem[]; after?: string }>>;
}

// --- Chat groups -------------------------------------------------------------------------------------

export type JoinApprovalMode = 'auto_approve' | 'approval_required';

export interface GroupCreateInput {
  subject: string;
  description?: string;
  joinApprovalMode?: JoinApprovalMode;
}

export interface GroupItemFailure {
  /** The join request id or the participant as sent. */
  item: string;
  code: string;
  message: string;
}

/** Per-item outcome of approve/reject/remove: every item is in exactly one of the two lists. */
export interface GroupItemResults {
  succeeded: string[];
  failed: GroupItemFailure[];
}

export type GroupMediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/** What a group accepts: text, media, or a (text or media) template; never interactive or commerce messages. */
export type GroupMessageContent =
  | { kind: 'text'; body: string; previewUrl?: boolean }
  | { kind: GroupMediaKind; link: string; caption?: string; filename?: string }
  | { kind: 'template'; name: string; language: string; components?: unknown[] };

export interface GroupPinInput {
  /** The provider's id of the message to pin or unpin. */
  messageId: string;
  pin: boolean;
  /** 1 to 30; required to pin. */
  expirationDays?: number;
}

/** One error a group notification carries: the provider's code and its most specific text. */
export interface GroupEventError {
  code: number | null;
  message: string;
}

export interface GroupParticipantRef {
  waId: string;
  /** The phone number as the business sent it, when the provider echoes it. */
  input: string | null;
}

export interface GroupSettingChange {
  text: string | null;
  ok: boolean;
  errors: GroupEventError[];
}

interface GroupEventBase {
  /** The business number the notification came for (its provider phone-number id), when it says. */
  phoneNumberId: string | undefined;
  /** When the provider says it happened; null when the notification carried no readable time. */
  at: Date | null;
}

/** A change of a group the provider tells of, or a message a participant wrote into a group. */
export type ChatGroupEvent = GroupEventBase &
  (
    | {
        type: 'group_created';
        requestId: string;
        groupId: string;
        subject: string | null;
        description: string | null;
        inviteLink: string | null;
        joinApprovalMode: string | null;
      }
    | { type: 'group_create_failed'; requestId: string; errors: GroupEventError[] }
    | { type: 'group_deleted'; groupId: string; requestId: string | null; errors: GroupEventError[] }
    | { type: 'participants_added'; groupId: string; reason: string | null; participants: GroupParticipantRef[] }
    | {
        type: 'participants_removed';
        groupId: string;
        /** business (we removed them) or participant (they left); null when not said. */
        initiatedBy: string | null;
        participants: GroupParticipantRef[];
        failed: Array<{ input: string | null; waId: string | null; errors: GroupEventError[] }>;
      }
    | { type: 'join_request_created'; groupId: string; joinRequestId: string; waId: string }
    | { type: 'join_request_revoked'; groupId: string; joinRequestId: string; waId: string }
    | {
        type: 'settings_updated';
        groupId: string;
        requestId: string | null;
        subject?: GroupSettingChange;
        description?: GroupSettingChange;
        profilePicture?: GroupSettingChange;
      }
    | { type: 'group_suspended'; groupId: string }
    | { type: 'group_suspend_cleared'; groupId: string }
    | { type: 'group_message'; groupId: string; message: InboundMessage }
  );

/**
 * The chat provider's groups (WhatsApp's Groups API): groups on a business number, their invite
 * link, join requests, participants and pins. A creation answers only with a request id; the
 * group's id and link come in a later notification. Refusals are `permanent` ProviderResults
 * carrying the provider's code, throttles and outages retryable ones.
 */
export interface ChatGroupProvider {
  readonly key: ProviderKey;
  /** Asks for a group; its id and invite link arrive in a `group_created` event carrying this request id. */
  createGroup(phoneNumberId: string, input: GroupCreateInput): Promise<ProviderResult<{ requestId: string }>>;
  /** Confirmed later by a `settings_updated` event. */
  updateGroup(groupId: string, change: { subject?: string; description?: string }): Promise<ProviderResult<{ accepted: true }>>;
  /** Deletes the group and removes everyone, the business included. */
  deleteGroup(groupId: string): Promise<ProviderResult<{ accepted: true }>>;
  /** A new link; the old one stops working. */
  resetInviteLink(groupId: string): Promise<ProviderResult<{ inviteLink: string }>>;
  approveJoinRequests(groupId: string, joinRequestIds: string[]): Promise<ProviderResult<GroupItemResults>>;
  rejectJoinRequests(groupId: string, joinRequestIds: string[]): Promise<ProviderResult<GroupItemResults>>;
  /** Phone numbers or WhatsApp ids; a removed user cannot rejoin through the invite link. */
  removeParticipants(groupId: string, users: string[]): Promise<ProviderResult<GroupItemResults>>;
  pin(phoneNumberId: string, groupId: string, p: GroupPinInput, idempotencyKey: string): Promise<ProviderResult<SentMessage>>;
  /** The request a group message is sent with: stored on the record and sent by the chat provider, as a one-to-one message's. */
  messageRequest(from: ChatSender, groupId: string, content: GroupMessageContent): ChatRequest;
  /** A verified notification's group events (group changes, messages written into groups), in the order the provider listed them. */
  parseWebhook(req: WebhookRequest): ChatGroupEvent[];
}

// --- Payments ------------------------------------------------------------------------------------

/** The value a payment stores as its provider. */
export type PaymentProviderKey = 'mpesa-daraja';

/** Where a payment stands at the provider, in our words (mobile money has no authorise step). */
export type PaymentProviderState = 'pending' | 'paid' | 'failed' | 'expired' | 'cancelled';

/** Why a payment did not go through, in our words; the provider's own code travels beside it. */
export type PaymentFailureReason =
  'insufficient_funds' | 'payer_cancelled' | 'no_answer' | 'expired' | 'wrong_pin' | 'payer_busy' | 'push_failed' | 'provider_error';

export interface PaymentRequest {
  /** Our payment's reference: the idempotency key, echoed back to us in the result callback. */
  reference: string;
  /** In the currency's minor units (hundredths); a provider that charges whole units refuses cents. */
  amountMinor: number;
  currency: string;
  /** The payer's phone, E.164 with '+'. */
  payer: string;
  /** What the payer sees on the prompt (the provider may shorten it). */
  note: string;
  /** Where the result goes; absent, the adapter's own result endpoint under PUBLIC_BASE_URL. */
  callbackUrl?: string;
}

/** The provider took the request: the payer is being asked; the result comes later (callback or status). */
export interface PaymentAcknowledgement {
  /** The provider's id of this attempt: status() takes it and the result callback names it. */
  providerRef: string;
  /** What the provider said, for the timeline. */
  message: string;
}

export interface PaymentStatus {
  state: PaymentProviderState;
  /** Null while pending and when paid. */
  reason: PaymentFailureReason | null;
  /** The provider's own code (e.g. Daraja's ResultCode "1032"), kept for last_error and support. */
  providerCode: string | null;
  message: string;
}

export interface RefundRequest {
  /** Our refund payment's reference (its own idempotency key), echoed back in the refund's result. */
  reference: string;
  /**
   * The settled payment's transaction at the provider: the `receipt` its result carried (Daraja
   * reverses by the M-Pesa receipt number, not by the push's id).
   */
  originalProviderRef: string;
  amountMinor: number;
  currency: string;
  reason: string;
  callbackUrl?: string;
}

export interface RefundAcknowledgement {
  /** The provider's id of this refund: its result callback names it. */
  providerRef: string;
  message: string;
}

/** A payment's final result as the provider reported it (a verified callback), in our words. */
export interface PaymentResultEvent {
  type: 'payment_result';
  providerRef: string;
  /** Our reference when the callback carries it (our callback URL names it); null otherwise. */
  reference: string | null;
  outcome: Exclude<PaymentProviderState, 'pending'>;
  reason: PaymentFailureReason | null;
  providerCode: string;
  message: string;
  /** What the payer paid, minor units; null when the provider said nothing (failures). */
  amountMinor: number | null;
  /** The currency of amountMinor when the provider names one (Daraja does not: absent). */
  currency?: string | null;
  /** The provider's transaction id of a paid payment (what a refund reverses); null otherwise. */
  receipt: string | null;
  /** The payer's phone as the provider reports it, E.164; null when absent. */
  payer: string | null;
  /** When the provider says it happened; null when the callback carried no readable time. */
  occurredAt: Date | null;
}

/** A refund's final result, in our words. */
export interface RefundResultEvent {
  type: 'refund_result';
  providerRef: string;
  reference: string | null;
  outcome: 'refunded' | 'failed';
  providerCode: string;
  message: string;
  amountMinor: number | null;
  /** The provider's transaction id of the refund itself; null when it failed. */
  receipt: string | null;
  occurredAt: Date | null;
}

export type PaymentEvent = PaymentResultEvent | RefundResultEvent;

/** A period of the provider's report: transactions completed at or after `from` and before `to`. */
export interface ReportPeriod {
  from: Date;
  to: Date;
}

/**
 * One settled transaction as the provider's own report shows it, in our words: what reconciliation
 * compares our ledger with. Only money that moved is a line (a failed or cancelled push is none).
 */
export interface SettlementLine {
  /**
   * The provider's id of the request that made it, the key our payments store (`provider_ref`): a
   * push's attempt id, a refund's. Null for money the provider took without our asking (a payer
   * paying the till or paybill directly), which names no payment of ours.
   */
  providerRef: string | null;
  /** The provider's transaction id (Daraja: the M-Pesa receipt number). */
  receipt: string;
  /** money in from a payer, or money given back (a refund). */
  kind: 'payment' | 'reversal';
  /** Positive, minor units (100 a major unit, as our amounts). */
  amountMinor: number;
  /** Null when the report names none (a single-currency account's statement). */
  currency: string | null;
  completedAt: Date;
  /** The payer's phone (E.164) as the provider shows it; null when absent. */
  payer: string | null;
  /** A reversal's original transaction (its receipt); null otherwise. */
  reverses: string | null;
}

/** One endpoint the payment provider posts results to (served ahead of Koa like the others). */
export interface PaymentCallbackEndpoint {
  method: 'POST';
  path: string;
  summary: string;
  answer: WebhookAnswer & { description: string; schema: Record<string, unknown> };
  query?: Record<string, unknown>;
  /** A verified callback (verifyCallback said yes): its events. Throws MalformedWebhook. */
  parse(req: WebhookRequest): PaymentEvent[];
}

/**
 * A mobile-money provider: request to pay (a prompt on the payer's phone, acknowledged at once, the
 * result posted later to a callback), the status of an attempt, refunds, and the callbacks. Refusals
 * are `permanent` ProviderResults carrying the provider's code; throttles, outages and timeouts are
 * retryable ones. A timed-out request to pay may still have reached the payer (the provider keeps
 * no idempotency key), so a caller retries it only after the prompt's life has passed.
 */
export interface PaymentProvider {
  readonly key: PaymentProviderKey;
  readonly kind: 'payment';
  /** The currencies this provider account charges in. */
  readonly currencies: readonly string[];
  readonly callbacks: readonly PaymentCallbackEndpoint[];
  requestToPay(r: PaymentRequest): Promise<ProviderResult<PaymentAcknowledgement>>;
  /** Where an attempt stands; `pending` while the provider is still processing it or cannot say yet. */
  status(providerRef: string): Promise<ProviderResult<PaymentStatus>>;
  refund(r: RefundRequest): Promise<ProviderResult<RefundAcknowledgement>>;
  /**
   * The provider's report of the transactions it settled in a period (what reconciliation compares
   * our ledger with); a provider with no report to read answers a permanent failure.
   */
  report(period: ReportPeriod): Promise<ProviderResult<SettlementLine[]>>;
  /** Whether a callback carries a valid, fresh signature (exact bytes, headers); forged, unsigned or stale: false. */
  verifyCallback(req: WebhookRequest): boolean;
}

// --- Message templates -------------------------------------------------------------------------------

/** A template as the provider holds it, in our words (status and category as the provider spells them). */
export interface ProviderTemplate {
  providerTemplateId: string;
  name: string;
  language: string;
  /** The provider's status word (PENDING, APPROVED, REJECTED, PAUSED…). */
  status: string;
  category: string;
  /** Why it was rejected (INVALID_FORMAT…); null when the provider says NONE or nothing. */
  reason: string | null;
  components: unknown[];
}

/** What a template is submitted with (the Cloud API's message_templates body). */
export interface TemplateSubmission {
  name: string;
  language: string;
  category: string;
  components: readonly unknown[];
  allowCategoryChange?: boolean;
}

/** A template's status as the provider's status-update webhook carries it. */
export interface TemplateStatusEvent {
  /** The WABA the webhook entry names. */
  businessAccountId: string;
  providerTemplateId: string;
  name: string | null;
  language: string | null;
  /** The provider's event word (APPROVED, REJECTED, PAUSED, FLAGGED…). */
  event: string;
  reason: string | null;
}

/**
 * The chat provider's template management (Meta's message_templates on a WABA). A refusal keeps the
 * provider's code (a duplicate name and language is `duplicate`); outages are retryable failures.
 */
export interface TemplateProvider {
  readonly key: ProviderKey;
  submit(
    businessAccountId: string,
    t: TemplateSubmission,
  ): Promise<ProviderResult<{ providerTemplateId: string; status: string; category: string }>>;
  /** One template by its provider id; a template the provider no longer has is a permanent failure with code `not_found`. */
  get(providerTemplateId: string): Promise<ProviderResult<ProviderTemplate>>;
  /** Every template of the WABA (all pages), optionally only those with this status or this name. */
  list(businessAccountId: string, filter?: { status?: string; name?: string }): Promise<ProviderResult<ProviderTemplate[]>>;
  /** Deletes one translation (name and provider id). */
  remove(businessAccountId: string, name: string, providerTemplateId: string): Promise<ProviderResult<{ deleted: boolean }>>;
  /** The template status updates a verified webhook carries (none when it carries none). */
  parseWebhook(req: WebhookRequest): TemplateStatusEvent[];
}

// --- Social publishing ----------------------------------------------------------------------------

/** Where a post goes: the platform, the page or professional account's id there, and its token. */
export interface SocialDestination {
  platform: 'facebook' | 'instagram';
  externalId: string;
  accessToken: string;
}

/** What is published, in our words (domain/posts): at most one media item here. */
export interface SocialContent {
  text: string | null;
  link: string | null;
  media: { type: 'image' | 'video'; url: string; altText?: string | null } | null;
}

/** A platform's refusal kept for the post: its own code, subcode and message. */
export interface SocialRefusal {
  code: string;
  subcode: number | null;
  message: string;
}

export interface SocialPublisher {
  readonly key: 'meta-social';
  /**
   * Publishes now. A platform that builds the post first (an Instagram container) reports the
   * container through `onContainer` before waiting on it, and takes it back as `containerId` on a
   * retry, so a retry never builds a second one while the first may still finish. A failure says
   * whether a later attempt may succeed (`permanent`), and carries the platform's reason.
   */
  publish(
    to: SocialDestination,
    content: SocialContent,
    progress: { containerId: string | null; onContainer(id: string | null): Promise<void> },
  ): Promise<ProviderResult<{ platformPostId: string }>>;
}

/**
 * The model of agent runs: one OpenAI-compatible chat completion (tool calls, no streaming). The
 * adapter (providers/openai-chat) answers a normalized turn or throws ModelCallFailed: `retryable`
 * for a 429, a 5xx, a timeout or a dropped connection; not for an answer that is no chat completion.
 */
export interface ChatModelRequest {
  model: string;
  messages: unknown[];
  tools: { name: string; description: string; parameters: Record<string, unknown> }[];
}

export interface ChatModelAnswer {
  content: string | null;
  /** Each call's arguments as the model wrote them (a JSON string on the wire; the caller parses it). */
  toolCalls: { id: string; name: string; arguments: unknown }[];
  finishReason: string | null;
  usage: { promptTokens: number; completionTokens: number };
}

export interface ChatModel {
  complete(req: ChatModelRequest): Promise<ChatModelAnswer>;
}

export class ModelCallFailed extends Error {
  constructor(
    message: string,
    public readonly retryable: boolean,
    public readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'ModelCallFailed';
  }
}
