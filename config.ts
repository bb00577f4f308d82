// One place that reads the environment. Every other module takes these values as arguments,
// so tests and the dev launcher can run several processes with different settings side by side.
export interface Config {
  port: number;
  databaseUrl: string;
  temporalAddress: string;
  temporalNamespace: string;
  taskQueue: string;
  publicBaseUrl: string;
  operatorToken: string;
  smsGatewayUrl: string;
  smsGatewayAccountSid: string;
  smsGatewayAuthToken: string;
  /** Sends with no sender identity go out through this messaging service (the provider picks the number). */
  smsGatewayMessagingServiceSid: string;
  whatsappApiUrl: string;
  whatsappAccessToken: string;
  whatsappAppSecret: string;
  rateLimitPerMinute: number;
  bodyLimitBytes: number;
  receiptTimeoutSeconds: number;
  deliveryPollSeconds: number;
  deliveryPollAttempts: number;
  logLevel: string;
  /** Provider throughput per channel type (sends per second across all workers); deferred sends answer queued. */
  smsMaxPerSecond: number;
  whatsappMaxPerSecond: number;
  /** How long a send request may wait, in total, for the providers' first answers. */
  firstOutcomeWaitMs: number;
  whatsappVerifyToken: string;
  /** Immediate sends a single API process hands to their own workflow at once; beyond it they go to the batch dispatcher. */
  firstOutcomeConcurrency: number;
  /** Above this many requests in flight in one API process, immediate sends skip the first-outcome wait. */
  firstOutcomeMaxInFlight: number;
  /** Light load: up to this many immediate sends per second (per API process) wait for their first outcome; above it all go to the batch dispatcher. */
  firstOutcomePerSecond: number;
  dispatchBatchSize: number;
  dispatchConcurrency: number;
  /** Contacts written per import activity (one transaction, one progress update). */
  contactImportBatchSize: number;
  /** Campaign dispatch: contacts per page (one transaction), pages per workflow run before continue-as-new. */
  campaignPageSize: number;
  campaignPagesPerRun: number;
  /** Price of one SMS segment debited from prepaid wallets by campaigns (decimal string). */
  smsSegmentPrice: string;
  /**
   * Task queue of webhook and automation deliveries. Not derived from taskQueue on purpose: every
   * worker of a deployment polls it, so a delivery never waits for one particular worker.
   */
  webhookTaskQueue: string;
}

const env = (name: string, fallback: string): string => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
};

export const providerTaskQueue = (config: Pick<Config, 'taskQueue'>, channelType: 'sms' | 'whatsapp') =>
  `${config.taskQueue}-provider-${channelType}`;

export function loadConfig(overrides: Partial<Config> = {}): Config {
  const port = Number(env('PORT', '8080'));
  return {
    port,
    databaseUrl: env('DATABASE_URL', 'postgres://postgres:postgres@127.0.0.1:5433/svc'),
    temporalAddress: env('TEMPORAL_ADDRESS', '127.0.0.1:7233'),
    temporalNamespace: env('TEMPORAL_NAMESPACE', 'default'),
    taskQueue: env('TEMPORAL_TASK_QUEUE', 'svc-main'),
    publicBaseUrl: env('PUBLIC_BASE_URL', `http://127.0.0.1:${port}`),
    operatorToken: env('OPERATOR_TOKEN', 'dev-operator-token'),
    smsGatewayUrl: env('SMS_GATEWAY_URL', 'http://127.0.0.1:4010/sms'),
    smsGatewayAccountSid: env('SMS_GATEWAY_ACCOUNT_SID', 'ACsimulator00000000000000000000000'),
    smsGatewayAuthToken: env('SMS_GATEWAY_AUTH_TOKEN', 'sim-sms-auth-token'),
    smsGatewayMessagingServiceSid: env('SMS_GATEWAY_MESSAGING_SERVICE_SID', 'MG00000000000000000000000000000000'),
    whatsappApiUrl: env('WHATSAPP_API_URL', 'http://127.0.0.1:4010/whatsapp/v21.0'),
    whatsappAccessToken: env('WHATSAPP_ACCESS_TOKEN', 'sim-wa-access-token'),
    whatsappAppSecret: env('WHATSAPP_APP_SECRET', 'sim-wa-app-secret'),
    rateLimitPerMinute: Number(env('RATE_LIMIT_PER_MINUTE', '120')),
    bodyLimitBytes: Number(env('BODY_LIMIT_BYTES', String(1024 * 1024))),
    receiptTimeoutSeconds: Number(env('RECEIPT_TIMEOUT_SECONDS', '600')),
    deliveryPollSeconds: Number(env('DELIVERY_POLL_SECONDS', '300')),
    deliveryPollAttempts: Number(env('DELIVERY_POLL_ATTEMPTS', '12')),
    logLevel: env('LOG_LEVEL', 'info'),
    smsMaxPerSecond: Number(env('SMS_MAX_PER_SECOND', '1000')),
    whatsappMaxPerSecond: Number(env('WHATSAPP_MAX_PER_SECOND', '80')),
    firstOutcomeWaitMs: Number(env('FIRST_OUTCOME_WAIT_MS', '2000')),
    whatsappVerifyToken: env('WHATSAPP_VERIFY_TOKEN', 'sim-wa-verify-token'),
    firstOutcomeConcurrency: Number(env('FIRST_OUTCOME_CONCURRENCY', '8')),
    firstOutcomeMaxInFlight: Number(env('FIRST_OUTCOME_MAX_IN_FLIGHT', '8')),
    firstOutcomePerSecond: Number(env('FIRST_OUTCOME_PER_SECOND', '20')),
    dispatchBatchSize: Number(env('DISPATCH_BATCH_SIZE', '200')),
    dispatchConcurrency: Number(env('DISPATCH_CONCURRENCY', '64')),
    contactImportBatchSize: Number(env('CONTACT_IMPORT_BATCH_SIZE', '500')),
    campaignPageSize: Number(env('CAMPAIGN_PAGE_SIZE', '1000')),
    campaignPagesPerRun: Number(env('CAMPAIGN_PAGES_PER_RUN', '20')),
    smsSegmentPrice: env('SMS_SEGMENT_PRICE', '0.01'),
    webhookTaskQueue: env('WEBHOOK_TASK_QUEUE', 'svc-webhooks'),
    ...overrides,
  };
}
