// The provider registry: one adapter per value of `channels.provider`. Senders pick the adapter by
// the channel's stored provider; the API's ingress serves every adapter's webhooks from this list.
import type { Config } from '../config.js';
import { createSmsGateway } from './sms-gateway/index.js';
import { createWhatsAppCloud, createWhatsAppCloudGroups, createWhatsAppCloudTemplates } from './whatsapp-cloud/index.js';
import { createWhatsAppCatalogue } from './whatsapp-cloud/catalogue.js';
import { createMpesaDaraja } from './mpesa-daraja/index.js';
import { createMetaSocial } from './meta-social/index.js';
import { createOpenAiChatModel } from './openai-chat/index.js';
import type { ChatModel } from './types.js';
import type {
  CatalogueProvider,
  ChannelType,
  ChatGroupProvider,
  TemplateProvider,
  ChatProvider,
  PaymentProvider,
  Provider,
  ProviderKey,
  SmsProvider,
  SocialPublisher,
} from './types.js';

export type * from './types.js';
export { MalformedWebhook, ModelCallFailed } from './types.js';

/** The agents' model (an OpenAI-compatible chat-completions endpoint; docs/agents.md). */
export const createChatModel = (s: { modelApiUrl: string; modelApiKey: string; modelTimeoutMs: number }): ChatModel =>
  createOpenAiChatModel({ baseUrl: s.modelApiUrl, apiKey: s.modelApiKey, timeoutMs: s.modelTimeoutMs });

export type ProviderSettings = Pick<
  Config,
  | 'publicBaseUrl'
  | 'smsGatewayUrl'
  | 'smsGatewayAccountSid'
  | 'smsGatewayAuthToken'
  | 'smsGatewayMessagingServiceSid'
  | 'whatsappApiUrl'
  | 'whatsappAccessToken'
  | 'whatsappAppSecret'
  | 'whatsappVerifyToken'
  | 'whatsappBusinessId'
  | 'paymentProviderUrl'
  | 'paymentConsumerKey'
  | 'paymentConsumerSecret'
  | 'paymentShortCode'
  | 'paymentPasskey'
  | 'paymentInitiator'
  | 'paymentSecurityCredential'
  | 'paymentCallbackSecret'
  | 'paymentCurrencies'
  | 'socialGraphUrl'
>;

/** The provider of a channel that stores none (a chat number without a channel row). */
export const DEFAULT_PROVIDER: Record<ChannelType, ProviderKey> = { sms: 'sms-gateway', whatsapp: 'whatsapp-cloud' };

export class UnknownProvider extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownProvider';
  }
}

export interface ProviderRegistry {
  readonly all: readonly Provider[];
  /** The adapter stored as `key`; throws UnknownProvider. */
  get(key: string): Provider;
  /** The adapter that sends a channel's messages: its stored provider, else the channel type's default. */
  forChannel(channelType: ChannelType, stored: string | null | undefined): Provider;
  sms(stored?: string | null): SmsProvider;
  chat(stored?: string | null): ChatProvider;
  /** The chat provider's commerce catalogue (a shop's `meta_catalogue_id` lives there). */
  catalogue(): CatalogueProvider;
  /** The chat provider's groups (its Groups API and the group side of its webhook). */
  chatGroups(): ChatGroupProvider;
  /** The chat provider's message templates (its template management and the template side of its webhook). */
  templates(): TemplateProvider;
  /**
   * The payment provider a payment stores as `stored` (absent: the configured one); throws
   * UnknownProvider. Its result callbacks are served from its own `callbacks`, apart from `all`.
   */
  payments(stored?: string | null): PaymentProvider;
  /** The social platforms' publisher (Facebook Pages, Instagram): the posts family's. */
  social(): SocialPublisher;
}

export function createProviderRegistry(s: ProviderSettings, o: { timeoutMs?: number } = {}): ProviderRegistry {
  const all: Provider[] = [
    createSmsGateway({
      baseUrl: s.smsGatewayUrl,
      accountSid: s.smsGatewayAccountSid,
      authToken: s.smsGatewayAuthToken,
      messagingServiceSid: s.smsGatewayMessagingServiceSid,
      publicBaseUrl: s.publicBaseUrl,
      timeoutMs: o.timeoutMs,
    }),
    createWhatsAppCloud({
      baseUrl: s.whatsappApiUrl,
      accessToken: s.whatsappAccessToken,
      appSecret: s.whatsappAppSecret,
      verifyToken: s.whatsappVerifyToken,
      timeoutMs: o.timeoutMs,
    }),
  ];
  const catalogue = createWhatsAppCatalogue({
    baseUrl: s.whatsappApiUrl,
    accessToken: s.whatsappAccessToken,
    businessId: s.whatsappBusinessId,
    publicBaseUrl: s.publicBaseUrl,
    timeoutMs: o.timeoutMs,
  });
  const chatGroups = createWhatsAppCloudGroups({ baseUrl: s.whatsappApiUrl, accessToken: s.whatsappAccessToken, timeoutMs: o.timeoutMs });
  const templates = createWhatsAppCloudTemplates({ baseUrl: s.whatsappApiUrl, accessToken: s.whatsappAccessToken, timeoutMs: o.timeoutMs });
  const payments = createMpesaDaraja({
    baseUrl: s.paymentProviderUrl,
    consumerKey: s.paymentConsumerKey,
    consumerSecret: s.paymentConsumerSecret,
    shortCode: s.paymentShortCode,
    passkey: s.paymentPasskey,
    initiator: s.paymentInitiator,
    securityCredential: s.paymentSecurityCredential,
    callbackSecret: s.paymentCallbackSecret,
    currencies: s.paymentCurrencies,
    publicBaseUrl: s.publicBaseUrl,
    timeoutMs: o.timeoutMs,
  });
  const social = createMetaSocial({ baseUrl: s.socialGraphUrl, timeoutMs: o.timeoutMs });
  const byKey = new Map<string, Provider>(all.map((p) => [p.key, p]));
  const get = (key: string) => {
    const p = byKey.get(key);
    if (!p) throw new UnknownProvider(`No provider adapter is registered as "${key}".`);
    return p;
  };
  const forChannel = (channelType: ChannelType, stored: string | null | undefined) => {
    const p = get(stored || DEFAULT_PROVIDER[channelType]);
    if (p.channelType !== channelType) throw new UnknownProvider(`Provider "${p.key}" does not send ${channelType} messages.`);
    return p;
  };
  return {
    all,
    get,
    forChannel,
    sms: (stored) => forChannel('sms', stored) as SmsProvider,
    chat: (stored) => forChannel('whatsapp', stored) as ChatProvider,
    catalogue: () => catalogue,
    chatGroups: () => chatGroups,
    templates: () => templates,
    payments: (stored) => {
      if (stored && stored !== payments.key) throw new UnknownProvider(`No payment provider adapter is registered as "${stored}".`);
      return payments;
    },
    social: () => social,
  };
}

const shared = new WeakMap<object, ProviderRegistry>();
/** One registry per configuration object (the API process reads webhooks and builds chat requests with it). */
export function providerRegistry(config: ProviderSettings): ProviderRegistry {
  let r = shared.get(config);
  if (!r) {
    r = createProviderRegistry(config);
    shared.set(config, r);
  }
  return r;
}
