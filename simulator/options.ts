// Simulator settings. createSimulator never reads the environment itself so in-process tests are
// not affected by whatever the developer's shell exports; main.ts bridges env → options.
import { createSimulatorLogger, type Logger } from './log.js';

export interface SimulatorOptions {
  host: string;
  smsAccountSid: string;
  smsAuthToken: string;
  waAccessToken: string;
  waAppSecret: string;
  /** Used in webhook envelopes (entry[].id and metadata.display_phone_number). */
  waBusinessAccountId: string;
  waDisplayPhoneNumber: string;
  smsInboundUrl: string | null;
  waWebhookUrl: string | null;
  /** Pause before each status step (queued→sent, sent→delivered, ...). */
  receiptDelayMs: number;
  /** How long a `timeout` fault hangs before answering 504. */
  timeoutFaultMs: number;
  /** Per-attempt limit for webhooks the simulator posts. */
  callbackTimeoutMs: number;
  /** Extra attempts after a failed webhook; waits grow as max(receiptDelayMs, 20) * 2^n. */
  callbackRetries: number;
  /** Meta's default per-number throughput (130429 above it). */
  waThroughputPerSecond: number;
  /** Meta's pair limit: a burst allowance, refilled one message per interval (131056 when empty). */
  waPairBurst: number;
  waPairIntervalMs: number;
  /** When true, a template not registered through /_sim/config is answered with 132001. */
  strictTemplates: boolean;
  /**
   * How many webhook records /_sim/callbacks keeps (the newest). Each SMS posts two; kept without a
   * bound, a 100,000-message campaign grew the simulator to about 850 MB and its collector with it.
   */
  callbackLogLimit: number;
  /** How long an items_batch handle of the catalogue API stays in_progress before it finishes. */
  catalogueBatchMs: number;
  /** The mobile-money provider (Daraja-shaped): OAuth client, shortcode, STK passkey, reversal operator. */
  paymentConsumerKey: string;
  paymentConsumerSecret: string;
  paymentShortCode: string;
  paymentPasskey: string;
  paymentInitiator: string;
  paymentSecurityCredential: string;
  /** Key of the X-Callback-Signature its callbacks carry (Daraja signs nothing; this is ours). */
  paymentCallbackSecret: string;
  /** From the push to its result (the payer answering the prompt). */
  paymentResultDelayMs: number;
  /** How much later a `late_callback` fault posts the result than it settled. */
  paymentLateCallbackMs: number;
  /** Life of an OAuth token (Daraja: 3599 s). */
  paymentTokenTtlSeconds: number;
  logger: Logger;
}

export const DEFAULT_OPTIONS: Omit<SimulatorOptions, 'logger'> = {
  host: '127.0.0.1',
  smsAccountSid: 'ACsimulator00000000000000000000000',
  smsAuthToken: 'sim-sms-auth-token',
  waAccessToken: 'sim-wa-access-token',
  waAppSecret: 'sim-wa-app-secret',
  waBusinessAccountId: '102290129340398',
  waDisplayPhoneNumber: '15550001111',
  smsInboundUrl: null,
  waWebhookUrl: null,
  receiptDelayMs: 200,
  timeoutFaultMs: 30_000,
  callbackTimeoutMs: 5_000,
  callbackRetries: 3,
  waThroughputPerSecond: 80,
  waPairBurst: 45,
  waPairIntervalMs: 6_000,
  strictTemplates: false,
  callbackLogLimit: 20_000,
  catalogueBatchMs: 200,
  paymentConsumerKey: 'sim-mpesa-consumer-key',
  paymentConsumerSecret: 'sim-mpesa-consumer-secret',
  paymentShortCode: '174379',
  paymentPasskey: 'sim-mpesa-passkey',
  paymentInitiator: 'testapi',
  paymentSecurityCredential: 'sim-mpesa-security-credential',
  paymentCallbackSecret: 'sim-payment-callback-secret',
  paymentResultDelayMs: 300,
  paymentLateCallbackMs: 3_000,
  paymentTokenTtlSeconds: 3599,
};

export function resolveOptions(partial: Partial<SimulatorOptions> = {}): SimulatorOptions {
  const defined = Object.fromEntries(Object.entries(partial).filter(([, v]) => v !== undefined));
  return {
    ...DEFAULT_OPTIONS,
    ...defined,
    logger: partial.logger ?? createSimulatorLogger(),
  } as SimulatorOptions;
}

export function optionsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<SimulatorOptions> {
  const str = (name: string): string | undefined => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const num = (name: string): number | undefined => {
    const v = str(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got "${v}"`);
    return n;
  };
  return {
    host: str('SIM_HOST'),
    smsAccountSid: str('SIM_SMS_ACCOUNT_SID'),
    smsAuthToken: str('SIM_SMS_AUTH_TOKEN'),
    waAccessToken: str('SIM_WA_ACCESS_TOKEN'),
    waAppSecret: str('SIM_WA_APP_SECRET'),
    smsInboundUrl: str('SIM_SMS_INBOUND_URL'),
    waWebhookUrl: str('SIM_WA_WEBHOOK_URL'),
    receiptDelayMs: num('SIM_RECEIPT_DELAY_MS'),
    callbackLogLimit: num('SIM_CALLBACK_LOG_LIMIT'),
    timeoutFaultMs: num('SIM_TIMEOUT_FAULT_MS'),
    catalogueBatchMs: num('SIM_CATALOGUE_BATCH_MS'),
    paymentConsumerKey: str('SIM_PAYMENT_CONSUMER_KEY'),
    paymentConsumerSecret: str('SIM_PAYMENT_CONSUMER_SECRET'),
    paymentShortCode: str('SIM_PAYMENT_SHORTCODE'),
    paymentPasskey: str('SIM_PAYMENT_PASSKEY'),
    paymentInitiator: str('SIM_PAYMENT_INITIATOR'),
    paymentSecurityCredential: str('SIM_PAYMENT_SECURITY_CREDENTIAL'),
    paymentCallbackSecret: str('SIM_PAYMENT_CALLBACK_SECRET'),
    paymentResultDelayMs: num('SIM_PAYMENT_RESULT_DELAY_MS'),
    paymentLateCallbackMs: num('SIM_PAYMENT_LATE_CALLBACK_MS'),
    strictTemplates: str('SIM_WA_STRICT_TEMPLATES') === undefined ? undefined : str('SIM_WA_STRICT_TEMPLATES') === 'true',
  };
}
