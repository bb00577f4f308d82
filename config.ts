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
  /** The Meta business that owns the shops' provider catalogues (POST /{business_id}/owned_product_catalogs). */
  whatsappBusinessId: string;
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
  /** How long a send that promises the provider's verdict (product messages) waits for it. */
  answeredSendWaitMs: number;
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
  /**
   * Staged rows a catalogue sync applies per activity (one transaction, one progress update): a whole
   * 5,000-row batch by default, which measured 3.5-3.9x the bare upsert against 4.8-6.3x in chunks of
   * 1,000 (docs/benchmarks.md); larger feeds loop.
   */
  catalogueSyncChunkSize: number;
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
  /** NODE_ENV=production: the processes refuse to start with a missing, known default or short secret (productionSecretProblems). */
  production: boolean;
  /** When set, /admin/v1 is served only on this port (and OPERATOR_HOST), never on the public one. */
  operatorPort: number | null;
  operatorHost: string;
  /** Failed authentications (401) per client address per minute, per API process, before it is answered 429. */
  authFailuresPerMinute: number;
  /** Failed operator-token attempts per client address per minute, per API process, before it is answered 429. */
  operatorFailuresPerMinute: number;
  /**
   * ALLOW_LOOPBACK_DESTINATIONS=true lets webhook and automation URLs point to this machine (127/8,
   * ::1, localhost): for the dev launcher and the test stack only. Private, link-local and metadata
   * addresses stay refused whatever it says (services/platform/destinations.ts).
   */
  allowLoopbackDestinations: boolean;
  /**
   * Create the hourly catalogue drift schedule paused (test stacks: an hourly pass must not push
   * back a remote change a test made on purpose). An existing schedule keeps its own state.
   */
  catalogueDriftPaused: boolean;
  /** A product feed pull: the whole download's time limit (connect, headers and body), in seconds. */
  feedTimeoutSeconds: number;
  /** A product feed larger than this many bytes is a failed run (docs/decisions.md, "Feeds"). */
  feedMaxBytes: number;
  /** A basket opened from a chat and left with items this long is abandoned (CART_QUIET_SECONDS, default 24 h). */
  cartQuietSeconds: number;
  /** A basket that never became an order expires this long after its last activity (CART_EXPIRE_SECONDS, default 7 days). */
  cartExpireSeconds: number;
  /** How long a chat group's creation waits for the provider's confirmation webhook before it fails (GROUP_CONFIRMATION_SECONDS, default 300). */
  groupConfirmationSeconds: number;
  /**
   * Seconds in one hour of a shop's reservation_ttl_hours: 3600 but in tests and benchmarks that need
   * a pending order's hold to lapse in seconds (docs/decisions.md, "Orders and stock holds").
   */
  orderHoldTtlUnitSeconds: number;
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
    whatsappBusinessId: env('WHATSAPP_BUSINESS_ID', '190000000000001'),
    rateLimitPerMinute: Number(env('RATE_LIMIT_PER_MINUTE', '120')),
    bodyLimitBytes: Number(env('BODY_LIMIT_BYTES', String(1024 * 1024))),
    receiptTimeoutSeconds: Number(env('RECEIPT_TIMEOUT_SECONDS', '600')),
    deliveryPollSeconds: Number(env('DELIVERY_POLL_SECONDS', '300')),
    deliveryPollAttempts: Number(env('DELIVERY_POLL_ATTEMPTS', '12')),
    logLevel: env('LOG_LEVEL', 'info'),
    smsMaxPerSecond: Number(env('SMS_MAX_PER_SECOND', '1000')),
    whatsappMaxPerSecond: Number(env('WHATSAPP_MAX_PER_SECOND', '80')),
    firstOutcomeWaitMs: Number(env('FIRST_OUTCOME_WAIT_MS', '2000')),
    answeredSendWaitMs: Number(env('ANSWERED_SEND_WAIT_MS', '15000')),
    whatsappVerifyToken: env('WHATSAPP_VERIFY_TOKEN', 'sim-wa-verify-token'),
    firstOutcomeConcurrency: Number(env('FIRST_OUTCOME_CONCURRENCY', '8')),
    firstOutcomeMaxInFlight: Number(env('FIRST_OUTCOME_MAX_IN_FLIGHT', '8')),
    firstOutcomePerSecond: Number(env('FIRST_OUTCOME_PER_SECOND', '20')),
    dispatchBatchSize: Number(env('DISPATCH_BATCH_SIZE', '200')),
    dispatchConcurrency: Number(env('DISPATCH_CONCURRENCY', '64')),
    contactImportBatchSize: Number(env('CONTACT_IMPORT_BATCH_SIZE', '500')),
    catalogueSyncChunkSize: Number(env('CATALOGUE_SYNC_CHUNK_SIZE', '5000')),
    campaignPageSize: Number(env('CAMPAIGN_PAGE_SIZE', '1000')),
    campaignPagesPerRun: Number(env('CAMPAIGN_PAGES_PER_RUN', '20')),
    smsSegmentPrice: env('SMS_SEGMENT_PRICE', '0.01'),
    webhookTaskQueue: env('WEBHOOK_TASK_QUEUE', 'svc-webhooks'),
    production: env('NODE_ENV', '') === 'production',
    operatorPort: env('OPERATOR_PORT', '') === '' ? null : Number(env('OPERATOR_PORT', '')),
    operatorHost: env('OPERATOR_HOST', '127.0.0.1'),
    authFailuresPerMinute: Number(env('AUTH_FAILURES_PER_MINUTE', '30')),
    operatorFailuresPerMinute: Number(env('OPERATOR_FAILURES_PER_MINUTE', '10')),
    allowLoopbackDestinations: env('ALLOW_LOOPBACK_DESTINATIONS', 'false') === 'true',
    catalogueDriftPaused: env('CATALOGUE_DRIFT_PAUSED', 'false') === 'true',
    feedTimeoutSeconds: Number(env('FEED_TIMEOUT_SECONDS', '300')),
    feedMaxBytes: Number(env('FEED_MAX_BYTES', String(100 * 1024 * 1024))),
    cartQuietSeconds: Number(env('CART_QUIET_SECONDS', String(24 * 3600))),
    cartExpireSeconds: Number(env('CART_EXPIRE_SECONDS', String(7 * 24 * 3600))),
    groupConfirmationSeconds: Number(env('GROUP_CONFIRMATION_SECONDS', '300')),
    orderHoldTtlUnitSeconds: Number(env('ORDER_HOLD_TTL_UNIT_SECONDS', '3600')),
    ...overrides,
  };
}

/**
 * The secrets that must be real in production: anyone holding one of the development defaults could
 * act as the operator or forge provider receipts and inbound messages into any account. The
 * defaults are public (they are in this file and in the simulator), so they are refused by value.
 */
export const PRODUCTION_SECRETS = [
  { variable: 'OPERATOR_TOKEN', key: 'operatorToken', defaults: ['dev-operator-token', 'test-operator-token'], minLength: 32 },
  { variable: 'SMS_GATEWAY_AUTH_TOKEN', key: 'smsGatewayAuthToken', defaults: ['sim-sms-auth-token'], minLength: 16 },
  { variable: 'WHATSAPP_ACCESS_TOKEN', key: 'whatsappAccessToken', defaults: ['sim-wa-access-token'], minLength: 16 },
  { variable: 'WHATSAPP_APP_SECRET', key: 'whatsappAppSecret', defaults: ['sim-wa-app-secret'], minLength: 16 },
  { variable: 'WHATSAPP_VERIFY_TOKEN', key: 'whatsappVerifyToken', defaults: ['sim-wa-verify-token'], minLength: 16 },
] as const satisfies ReadonlyArray<{ variable: string; key: keyof Config; defaults: readonly string[]; minLength: number }>;

/** The secret variables that are unset, a known default or too short; empty outside production. */
export function productionSecretProblems(config: Config, env: NodeJS.ProcessEnv = process.env): string[] {
  if (!config.production) return [];
  return PRODUCTION_SECRETS.filter((s) => {
    const given = env[s.variable];
    const value = config[s.key];
    return !given || (s.defaults as readonly string[]).includes(value) || value.length < s.minLength;
  }).map((s) => s.variable);
}

/** Ends the process with one line naming the variables when productionSecretProblems finds any. */
export function refuseDefaultSecrets(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  const bad = productionSecretProblems(config, env);
  if (bad.length === 0) return;
  process.stderr.write(
    `refusing to start with NODE_ENV=production: set ${bad.join(', ')} to real secrets (not the development defaults; OPERATOR_TOKEN at least 32 characters, the others at least 16)\n`,
  );
  process.exit(1);
}
