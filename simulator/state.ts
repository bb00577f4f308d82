// Everything the simulator remembers, in one object so tests can read it directly and /_sim/reset can
// drop it in one place. Record types live here to keep the modules that fill them free of cycles.
import type { Logger } from 'pino';
import type { FormFields } from './body.js';
import { FaultStore, type FaultKind } from './faults.js';
import { Lifecycle } from './lifecycle.js';
import { createCatalogueState, resetCatalogueState, type CatalogueState } from './meta-catalogue.js';
import type { SimulatorOptions } from './options.js';
import { RateLimiter } from './rate-limits.js';
import type { SmsEncoding } from './segments.js';
import { createGroupsState, resetGroupsState, type GroupsState } from './whatsapp-groups.js';
import { createPaymentsState, resetPaymentsState, type PaymentsState } from './mpesa-daraja.js';
import { createTemplatesState, resetTemplatesState, type TemplatesState } from './whatsapp-templates.js';
import { createSocialState, resetSocialState, type SocialState } from './social.js';

export interface StatusStep {
  status: string;
  at: string;
}

export interface RecordedRequest {
  headers: Record<string, string>;
  body: FormFields | unknown;
}

export interface SmsRecord {
  seq: number;
  sid: string;
  accountSid: string;
  to: string;
  from: string | null;
  messagingServiceSid: string | null;
  body: string;
  mediaUrls: string[];
  statusCallback: string | null;
  status: string;
  errorCode: number | null;
  errorMessage: string | null;
  segments: number;
  encoding: SmsEncoding;
  idempotencyToken: string | null;
  /** Repeats of the idempotency token that were answered with this message instead of a new send. */
  duplicates: number;
  noReceipt: boolean;
  request: RecordedRequest;
  history: StatusStep[];
  createdAt: number;
  sentAt: number | null;
  updatedAt: number;
}

export interface WaStatusError {
  code: number;
  title: string;
  message: string;
  error_data: { details: string };
  href: string;
}

export interface WaRecord {
  seq: number;
  id: string;
  phoneNumberId: string;
  to: string;
  waId: string;
  type: string;
  /** Pricing category reported in status webhooks ("service" for free-form replies). */
  category: string;
  payload: Record<string, unknown>;
  status: string;
  errors: WaStatusError[] | null;
  insideWindow: boolean;
  idempotencyKey: string | null;
  /** Later sends that carried the same X-Idempotency-Key. Graph does not dedupe, so each is a real send. */
  duplicates: number;
  duplicateOf: string | null;
  noReceipt: boolean;
  request: RecordedRequest;
  history: StatusStep[];
  createdAt: number;
}

export interface WaInboundRecord {
  seq: number;
  id: string;
  from: string;
  phoneNumberId: string;
  message: Record<string, unknown>;
  at: string;
}

export interface RejectionRecord {
  seq: number;
  provider: 'sms' | 'whatsapp';
  at: string;
  to: string | null;
  httpStatus: number;
  code: number;
  message: string;
  fault: FaultKind | null;
}

export interface CallbackAttempt {
  at: string;
  statusCode: number | null;
  error: string | null;
}

export interface CallbackRecord {
  seq: number;
  provider: 'sms' | 'whatsapp' | 'payment';
  /** whatsapp.group: a Groups API webhook (lifecycle, participants, settings, status); messageId is the group id. */
  /** payment.result: an STK result (messageId the CheckoutRequestID); payment.reversal: a reversal's Result (the ConversationID). */
  /** whatsapp.template: a message_template_status_update (messageId the template id). */
  kind:
    | 'sms.status'
    | 'sms.inbound'
    | 'whatsapp.status'
    | 'whatsapp.inbound'
    | 'whatsapp.group'
    | 'whatsapp.template'
    | 'payment.result'
    | 'payment.reversal';
  messageId: string | null;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  rawBody: string;
  attempts: CallbackAttempt[];
  /** Status code of the last attempt; null when the receiver could not be reached. */
  statusCode: number | null;
  delivered: boolean;
}

export interface TemplateDef {
  languages: string[] | null;
  bodyParams: number | null;
  headerParams: number | null;
  category: string;
}

/** How the status webhook sequence is bent, so receivers can be tested against Meta's documented disorder. */
export type WaStatusMode = 'in_order' | 'skip_delivered' | 'duplicate' | 'out_of_order';

export interface RuntimeConfig {
  receiptDelayMs: number;
  smsInboundUrl: string | null;
  waWebhookUrl: string | null;
  /** Digits only, so "+255..." and "255..." match the same subscriber. */
  optOuts: Set<string>;
  waStatusMode: WaStatusMode;
  templates: Map<string, TemplateDef>;
  strictTemplates: boolean;
}

export interface SimState {
  readonly options: SimulatorOptions;
  readonly log: Logger;
  readonly config: RuntimeConfig;
  readonly sms: { messages: SmsRecord[]; bySid: Map<string, SmsRecord>; byToken: Map<string, SmsRecord> };
  readonly wa: {
    messages: WaRecord[];
    byId: Map<string, WaRecord>;
    byKey: Map<string, WaRecord>;
    /** `${phoneNumberId}:${waId}` → time of the user's last inbound message. */
    windows: Map<string, number>;
    inbound: WaInboundRecord[];
  };
  readonly rejections: RejectionRecord[];
  readonly callbacks: CallbackRecord[];
  readonly faults: FaultStore;
  readonly limiter: RateLimiter;
  readonly life: Lifecycle;
  /** Meta's Commerce catalogues (meta-catalogue.ts). */
  readonly catalogue: CatalogueState;
  /** WhatsApp groups (whatsapp-groups.ts). */
  readonly groups: GroupsState;
  /** The mobile-money provider's payments, reversals and tokens (mpesa-daraja.ts). */
  readonly payments: PaymentsState;
  /** WhatsApp message templates under review and approved (whatsapp-templates.ts). */
  readonly templates: TemplatesState;
  /** Facebook Page posts and Instagram containers and media (social.ts). */
  readonly social: SocialState;
  nextSeq(): number;
  /** Forget everything recorded and cancel pending receipts; URLs, delay and templates survive. */
  reset(): void;
}

export function createState(options: SimulatorOptions): SimState {
  let seq = 0;
  const state: SimState = {
    options,
    log: options.logger,
    config: {
      receiptDelayMs: options.receiptDelayMs,
      smsInboundUrl: options.smsInboundUrl,
      waWebhookUrl: options.waWebhookUrl,
      optOuts: new Set(),
      waStatusMode: 'in_order',
      templates: new Map(),
      strictTemplates: options.strictTemplates,
    },
    sms: { messages: [], bySid: new Map(), byToken: new Map() },
    wa: { messages: [], byId: new Map(), byKey: new Map(), windows: new Map(), inbound: [] },
    rejections: [],
    callbacks: [],
    faults: new FaultStore(),
    limiter: new RateLimiter(options),
    life: new Lifecycle(options.logger),
    catalogue: createCatalogueState(options.catalogueBatchMs),
    groups: createGroupsState(),
    payments: createPaymentsState(options),
    templates: createTemplatesState(),
    social: createSocialState(),
    nextSeq: () => ++seq,
    reset() {
      state.life.restart();
      state.sms.messages.length = 0;
      state.sms.bySid.clear();
      state.sms.byToken.clear();
      state.wa.messages.length = 0;
      state.wa.byId.clear();
      state.wa.byKey.clear();
      state.wa.windows.clear();
      state.wa.inbound.length = 0;
      state.rejections.length = 0;
      state.callbacks.length = 0;
      state.config.optOuts.clear();
      state.config.waStatusMode = 'in_order';
      state.faults.clear();
      state.limiter.clear();
      resetCatalogueState(state.catalogue);
      resetGroupsState(state.groups);
      resetPaymentsState(state.payments);
      resetTemplatesState(state.templates);
      resetSocialState(state.social);
    },
  };
  return state;
}
