// One place that reads the environment. Every other module takes these values as arguments,
// so tests and the dev launcher can run several processes with different settings side by side.
import fs from 'node:fs';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';

export interface Config {
  port: number;
  /** HOST: the API's listening address; 127.0.0.1 unless a deployment says 0.0.0.0 (docs/deploy.md). */
  host: string;
  databaseUrl: string;
  /** DATABASE_URL as the pg driver takes it, sslmode and the other libpq parameters applied (parseDatabaseUrl). */
  database: PgConnection;
  /** DATABASE_POOL_MAX: connections this process may hold; unset, the role's default (POOL_DEFAULTS). */
  databasePoolMax: number | null;
  /** DATABASE_POOL_IDLE_SECONDS: how long an unused connection stays open (0: until the process stops); see poolIdleMillis. */
  databasePoolIdleSeconds: number;
  temporalAddress: string;
  temporalNamespace: string;
  /** The Temporal connection from @temporalio/envconfig: address, TLS or mTLS, API key, gRPC metadata. */
  temporalConnection: TemporalConnectionOptions;
  /** WORKER_HEALTH_PORT: a worker answers /healthz and /readyz there (WORKER_HEALTH_HOST, loopback by default); unset, none. */
  workerHealthPort: number | null;
  workerHealthHost: string;
  taskQueue: string;
  publicBaseUrl: string;
  operatorToken: string;
  smsGatewayUrl: string;
  smsGatewayAccountSid: string;
  smsGatewayAuthToken: string;
  /** Sends with no sender identity go out through this messaging service (the provider picks the number). */
  smsGatewayMessagingServiceSid: string;
  whatsappApiUrl: string;
  /** The Graph API the posts family publishes to Facebook Pages and Instagram through. */
  socialGraphUrl: string;
  whatsappAccessToken: string;
  whatsappAppSecret: string;
  /**
   * DATA_CURSOR_SECRET: the key material of the data records cursors (services/data/cursor-seal.ts).
   * Every API process of a deployment must have the same value, or a page made by one cannot be
   * continued by another (it restarts at page one).
   */
  dataCursorSecret: string;
  /**
   * OAUTH_SECRET: the MCP authorization server's key material (api/oauth/keys.ts): its cookie keys
   * and its token signing key are derived from it. Several values separated by spaces rotate it: the
   * first signs, every one still verifies. The same value in every API process.
   */
  oauthSecret: string;
  /** Token and revocation requests per client address, and per client id, per minute and API process (OAUTH_TOKEN_REQUESTS_PER_MINUTE). */
  oauthTokenRequestsPerMinute: number;
  /** Dynamic client registrations per client address per minute and API process (OAUTH_REGISTRATIONS_PER_MINUTE). */
  oauthRegistrationsPerMinute: number;
  /** Failed sign-ins per client address, and per email, per minute and API process, before sign-in answers 429 (SIGN_IN_FAILURES_PER_MINUTE). */
  signInFailuresPerMinute: number;
  /**
   * Lifetimes of what the authorization server issues, in seconds: access tokens
   * (OAUTH_ACCESS_TOKEN_TTL_SECONDS, 3600) and authorization codes (OAUTH_CODE_TTL_SECONDS, 60). Short
   * ones in tests let expiry be seen; refresh tokens (30 days) and grants (180 days) are fixed.
   */
  oauthAccessTokenTtlSeconds: number;
  oauthCodeTtlSeconds: number;
  /** The Meta business that owns the shops' provider catalogues (POST /{business_id}/owned_product_catalogs). */
  whatsappBusinessId: string;
  /**
   * The mobile-money provider (Safaricom Daraja's shapes; docs/payments.md, "Provider"): its base
   * URL, OAuth consumer key and secret, the business shortcode and its STK passkey, the API operator
   * that may reverse and its encrypted credential, the key of our callback signature, and the
   * currencies the account charges in.
   */
  paymentProviderUrl: string;
  paymentConsumerKey: string;
  paymentConsumerSecret: string;
  paymentShortCode: string;
  paymentPasskey: string;
  paymentInitiator: string;
  paymentSecurityCredential: string;
  paymentCallbackSecret: string;
  paymentCurrencies: string[];
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
  /**
   * Batch dispatcher runs per channel (DISPATCH_RUNS, default 4): the most workers whose dispatch
   * adds throughput. Each worker streams DISPATCH_RUNS_PER_WORKER of them at once (default 1, so one
   * worker dispatches as a single dispatcher did); the provider budget per channel is shared in
   * PostgreSQL whatever the numbers (docs/architecture.md, "Several processes").
   */
  dispatchRuns: number;
  dispatchRunsPerWorker: number;
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
   * The model of agent runs (docs/agents.md): an OpenAI-compatible chat-completions endpoint
   * (MODEL_API_URL, e.g. https://api.openai.com/v1; the stack points it at the simulator's /v1),
   * its key and the model a profile gets when it names none. Each call is bounded by modelTimeoutMs;
   * Temporal retries a 429, a 5xx or a timeout.
   */
  modelApiUrl: string;
  modelApiKey: string;
  modelName: string;
  modelTimeoutMs: number;
  /** Agent usage prices (decimal strings, the account's currency): per 1,000 model tokens and per tool call. */
  agentTokenPrice: string;
  agentToolCallPrice: string;
  /** The engine's own throttle (/api/engine): requests per key per minute, apart from the v3 window. */
  engineRateLimitPerMinute: number;
  /** The longest a submission waits for its run to settle when it asks to (wait_seconds). */
  engineMaxWaitSeconds: number;
  /** Whether this API process serves the agent runs' tool door (AGENT_TOOL_WORKER, default true). */
  agentToolWorker: boolean;
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
  /** Failed authentications (401) per client address, and per credential hint, per minute and API process, before failures are answered 429. */
  authFailuresPerMinute: number;
  /** Failed operator-token attempts per client address, and per token hint, per minute and API process, before failures are answered 429. */
  operatorFailuresPerMinute: number;
  /**
   * TRUSTED_PROXY_HOPS: how many reverse proxies of this deployment stand in front of the API, each
   * appending the address it received from to X-Forwarded-For. 0 (the default): the client address
   * is the socket's and X-Forwarded-For is never read; n: the n-th address from the right (Koa's
   * `proxy` with `maxIpsCount` n), so whatever a client wrote there itself is not taken.
   */
  trustedProxyHops: number;
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
  /**
   * Payment reconciliation (docs/payments.md, "Reconciliation"): PAYMENT_RECONCILIATION_PAUSED=true
   * creates its schedule paused (test stacks; a deployment whose provider serves no report yet); an
   * existing schedule keeps its own state. Every EVERY_MINUTES (60) a run reconciles the
   * WINDOW_MINUTES (120, at least EVERY_MINUTES, so each minute is checked twice) ending LAG_MINUTES
   * (15) before it starts, leaving late callbacks and status polls time to reach our ledger.
   */
  paymentReconciliationPaused: boolean;
  paymentReconciliationEveryMinutes: number;
  paymentReconciliationWindowMinutes: number;
  paymentReconciliationLagMinutes: number;
  /**
   * CHECK_ANSWERS=true (the test suite): every REST answer is checked against its operation's output
   * schema, and one that does not match is answered 500 naming the operation and the mismatch, so the
   * test that made the request fails. Off in a deployment (it costs a validation per answer).
   */
  checkAnswers: boolean;
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
  /** A template in review is first polled this long after its submission, then at doubling intervals (TEMPLATE_REVIEW_POLL_SECONDS, default 60). */
  templateReviewPollSeconds: number;
  /** The longest interval between a template review's polls (TEMPLATE_REVIEW_POLL_MAX_SECONDS, default 1800). */
  templateReviewPollMaxSeconds: number;
  /** How long a template's review is followed before it is left to webhooks and refresh (TEMPLATE_REVIEW_MAX_HOURS, default 72). */
  templateReviewMaxHours: number;
  /**
   * Seconds in one hour of a shop's reservation_ttl_hours: 3600 but in tests and benchmarks that need
   * a pending order's hold to lapse in seconds (docs/decisions.md, "Orders and stock holds").
   */
  orderHoldTtlUnitSeconds: number;
  /**
   * Seconds in one minute of a shop's checkout_hold_minutes (CHECKOUT_HOLD_UNIT_SECONDS, 60): tests
   * set 1 so an anonymous order's checkout window lapses in seconds (docs/decisions.md, "The storefront cannot be hoarded").
   */
  checkoutHoldUnitSeconds: number;
  /**
   * WORKER_METRICS_PORT: a worker serves GET /metrics there (its own counters, Node's and the Temporal
   * SDK's worker metrics); unset, none. WORKER_METRICS_HOST defaults to the loopback.
   */
  workerMetricsPort: number | null;
  workerMetricsHost: string;
  /**
   * API_DRAIN_SECONDS (default 5): after SIGTERM an API answers /readyz 503 `stopping` and goes on
   * serving this long, every answer closing its connection, so a load balancer sees it and stops
   * sending before the listener closes (api/main.ts). 0: the listener closes at once.
   */
  apiDrainSeconds: number;
  /** API_STOP_GRACE_SECONDS (default 20): after the drain, how long requests in flight may take before their connections are cut. */
  apiStopGraceSeconds: number;
  /**
   * The bounds of an API request's database work (docs/architecture.md, "When a dependency fails"):
   * DATABASE_STATEMENT_TIMEOUT_MS (default 10000) is the server's statement_timeout for the API's
   * sessions, and, 1 s later, the driver's own read deadline, which also holds when the server no
   * longer answers at all; DATABASE_ACQUIRE_TIMEOUT_MS (default 5000) bounds the wait for a pooled
   * connection and for a new one to open (a connect_timeout in DATABASE_URL takes its place).
   */
  databaseStatementTimeoutMs: number;
  databaseAcquireTimeoutMs: number;
  /**
   * TEMPORAL_CALL_TIMEOUT_MS (default 10000): the deadline of an API call to Temporal that waits for
   * nothing (a start, a signal, a describe). A call that waits for a workflow on purpose (an update's
   * first outcome, a result) gets this plus the wait it asked for (temporal/client.ts).
   */
  temporalCallTimeoutMs: number;
}

const env = (name: string, fallback: string): string => {
  const v = process.env[name];
  return v === undefined || v === '' ? fallback : v;
};

export const providerTaskQueue = (config: Pick<Config, 'taskQueue'>, channelType: 'sms' | 'whatsapp') =>
  `${config.taskQueue}-provider-${channelType}`;

export function loadConfig(overrides: Partial<Config> = {}): Config {
  const port = Number(env('PORT', '8080'));
  const databaseUrl = overrides.databaseUrl ?? env('DATABASE_URL', 'postgres://postgres:postgres@127.0.0.1:5433/svc');
  const temporal = temporalConnectConfig(process.env);
  return {
    port,
    host: env('HOST', '127.0.0.1'),
    databaseUrl,
    database: parseDatabaseUrl(databaseUrl, process.env),
    databasePoolMax: optionalCount('DATABASE_POOL_MAX'),
    databasePoolIdleSeconds: nonNegative('DATABASE_POOL_IDLE_SECONDS', 300),
    temporalAddress: temporal.connection.address,
    temporalNamespace: temporal.namespace,
    temporalConnection: temporal.connection,
    workerHealthPort: env('WORKER_HEALTH_PORT', '') === '' ? null : Number(env('WORKER_HEALTH_PORT', '')),
    workerHealthHost: env('WORKER_HEALTH_HOST', '127.0.0.1'),
    taskQueue: env('TEMPORAL_TASK_QUEUE', 'svc-main'),
    publicBaseUrl: env('PUBLIC_BASE_URL', `http://127.0.0.1:${port}`),
    operatorToken: env('OPERATOR_TOKEN', 'dev-operator-token'),
    smsGatewayUrl: env('SMS_GATEWAY_URL', 'http://127.0.0.1:4010/sms'),
    smsGatewayAccountSid: env('SMS_GATEWAY_ACCOUNT_SID', 'ACsimulator00000000000000000000000'),
    smsGatewayAuthToken: env('SMS_GATEWAY_AUTH_TOKEN', 'sim-sms-auth-token'),
    smsGatewayMessagingServiceSid: env('SMS_GATEWAY_MESSAGING_SERVICE_SID', 'MG00000000000000000000000000000000'),
    whatsappApiUrl: env('WHATSAPP_API_URL', 'http://127.0.0.1:4010/whatsapp/v21.0'),
    socialGraphUrl: env('SOCIAL_GRAPH_URL', 'http://127.0.0.1:4010/graph/v21.0'),
    whatsappAccessToken: env('WHATSAPP_ACCESS_TOKEN', 'sim-wa-access-token'),
    whatsappAppSecret: env('WHATSAPP_APP_SECRET', 'sim-wa-app-secret'),
    dataCursorSecret: env('DATA_CURSOR_SECRET', 'dev-data-cursor-secret'),
    oauthSecret: env('OAUTH_SECRET', 'dev-oauth-secret'),
    oauthTokenRequestsPerMinute: Number(env('OAUTH_TOKEN_REQUESTS_PER_MINUTE', '30')),
    oauthRegistrationsPerMinute: Number(env('OAUTH_REGISTRATIONS_PER_MINUTE', '10')),
    signInFailuresPerMinute: Number(env('SIGN_IN_FAILURES_PER_MINUTE', '10')),
    oauthAccessTokenTtlSeconds: optionalCount('OAUTH_ACCESS_TOKEN_TTL_SECONDS') ?? 3600,
    oauthCodeTtlSeconds: optionalCount('OAUTH_CODE_TTL_SECONDS') ?? 60,
    whatsappBusinessId: env('WHATSAPP_BUSINESS_ID', '190000000000001'),
    paymentProviderUrl: env('PAYMENT_PROVIDER_URL', 'http://127.0.0.1:4010/daraja'),
    paymentConsumerKey: env('PAYMENT_CONSUMER_KEY', 'sim-mpesa-consumer-key'),
    paymentConsumerSecret: env('PAYMENT_CONSUMER_SECRET', 'sim-mpesa-consumer-secret'),
    paymentShortCode: env('PAYMENT_SHORTCODE', '174379'),
    paymentPasskey: env('PAYMENT_PASSKEY', 'sim-mpesa-passkey'),
    paymentInitiator: env('PAYMENT_INITIATOR', 'testapi'),
    paymentSecurityCredential: env('PAYMENT_SECURITY_CREDENTIAL', 'sim-mpesa-security-credential'),
    paymentCallbackSecret: env('PAYMENT_CALLBACK_SECRET', 'sim-payment-callback-secret'),
    paymentCurrencies: env('PAYMENT_CURRENCIES', 'KES,TZS')
      .split(',')
      .map((c) => c.trim().toUpperCase())
      .filter((c) => c !== ''),
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
    dispatchRuns: Math.max(1, Number(env('DISPATCH_RUNS', '4'))),
    dispatchRunsPerWorker: Math.max(1, Number(env('DISPATCH_RUNS_PER_WORKER', '1'))),
    contactImportBatchSize: Number(env('CONTACT_IMPORT_BATCH_SIZE', '500')),
    catalogueSyncChunkSize: Number(env('CATALOGUE_SYNC_CHUNK_SIZE', '5000')),
    campaignPageSize: Number(env('CAMPAIGN_PAGE_SIZE', '1000')),
    campaignPagesPerRun: Number(env('CAMPAIGN_PAGES_PER_RUN', '20')),
    smsSegmentPrice: env('SMS_SEGMENT_PRICE', '0.01'),
    modelApiUrl: env('MODEL_API_URL', 'http://127.0.0.1:4010/v1'),
    modelApiKey: env('MODEL_API_KEY', 'sim-model-key'),
    modelName: env('MODEL_NAME', 'sim-agent-1'),
    modelTimeoutMs: Number(env('MODEL_TIMEOUT_MS', '30000')),
    agentTokenPrice: env('AGENT_TOKEN_PRICE', '0.002'),
    agentToolCallPrice: env('AGENT_TOOL_CALL_PRICE', '0.001'),
    engineRateLimitPerMinute: Number(env('ENGINE_RATE_LIMIT_PER_MINUTE', '120')),
    engineMaxWaitSeconds: Number(env('ENGINE_MAX_WAIT_SECONDS', '10')),
    agentToolWorker: env('AGENT_TOOL_WORKER', 'true') !== 'false',
    webhookTaskQueue: env('WEBHOOK_TASK_QUEUE', 'svc-webhooks'),
    production: env('NODE_ENV', '') === 'production',
    operatorPort: env('OPERATOR_PORT', '') === '' ? null : Number(env('OPERATOR_PORT', '')),
    operatorHost: env('OPERATOR_HOST', '127.0.0.1'),
    authFailuresPerMinute: Number(env('AUTH_FAILURES_PER_MINUTE', '30')),
    operatorFailuresPerMinute: Number(env('OPERATOR_FAILURES_PER_MINUTE', '10')),
    trustedProxyHops: optionalCount('TRUSTED_PROXY_HOPS', 0) ?? 0,
    allowLoopbackDestinations: env('ALLOW_LOOPBACK_DESTINATIONS', 'false') === 'true',
    catalogueDriftPaused: env('CATALOGUE_DRIFT_PAUSED', 'false') === 'true',
    paymentReconciliationPaused: env('PAYMENT_RECONCILIATION_PAUSED', 'false') === 'true',
    paymentReconciliationEveryMinutes: optionalCount('PAYMENT_RECONCILIATION_EVERY_MINUTES') ?? 60,
    paymentReconciliationWindowMinutes: Math.max(
      optionalCount('PAYMENT_RECONCILIATION_WINDOW_MINUTES') ?? 120,
      optionalCount('PAYMENT_RECONCILIATION_EVERY_MINUTES') ?? 60,
    ),
    paymentReconciliationLagMinutes: nonNegative('PAYMENT_RECONCILIATION_LAG_MINUTES', 15),
    checkAnswers: env('CHECK_ANSWERS', 'false') === 'true',
    feedTimeoutSeconds: Number(env('FEED_TIMEOUT_SECONDS', '300')),
    feedMaxBytes: Number(env('FEED_MAX_BYTES', String(100 * 1024 * 1024))),
    cartQuietSeconds: Number(env('CART_QUIET_SECONDS', String(24 * 3600))),
    cartExpireSeconds: Number(env('CART_EXPIRE_SECONDS', String(7 * 24 * 3600))),
    groupConfirmationSeconds: Number(env('GROUP_CONFIRMATION_SECONDS', '300')),
    templateReviewPollSeconds: Number(env('TEMPLATE_REVIEW_POLL_SECONDS', '60')),
    templateReviewPollMaxSeconds: Number(env('TEMPLATE_REVIEW_POLL_MAX_SECONDS', '1800')),
    templateReviewMaxHours: Number(env('TEMPLATE_REVIEW_MAX_HOURS', '72')),
    orderHoldTtlUnitSeconds: Number(env('ORDER_HOLD_TTL_UNIT_SECONDS', '3600')),
    checkoutHoldUnitSeconds: Number(env('CHECKOUT_HOLD_UNIT_SECONDS', '60')),
    workerMetricsPort: env('WORKER_METRICS_PORT', '') === '' ? null : Number(env('WORKER_METRICS_PORT', '')),
    workerMetricsHost: env('WORKER_METRICS_HOST', '127.0.0.1'),
    apiDrainSeconds: nonNegative('API_DRAIN_SECONDS', 5),
    apiStopGraceSeconds: nonNegative('API_STOP_GRACE_SECONDS', 20),
    databaseStatementTimeoutMs: optionalCount('DATABASE_STATEMENT_TIMEOUT_MS') ?? 10_000,
    databaseAcquireTimeoutMs: optionalCount('DATABASE_ACQUIRE_TIMEOUT_MS') ?? 5000,
    temporalCallTimeoutMs: optionalCount('TEMPORAL_CALL_TIMEOUT_MS') ?? 10_000,
    ...overrides,
  };
}

/** The processes that check their secrets at start-up; each is given (and checks) only those it uses. */
export type SecretRole = 'api' | 'worker';

/**
 * The secrets that must be real in production: anyone holding one of the development defaults could
 * act as the operator or forge provider receipts and inbound messages into any account. The
 * defaults are public (they are in this file and in the simulator), so they are refused by value.
 * `roles`: the processes that use the secret. The API verifies the providers' webhooks (the SMS auth
 * token, the app secret, the verify token), serves the operator API and seals the data cursors; it
 * builds provider requests but never sends one. A worker calls the providers (the SMS auth token, the
 * access token).
 */
export const PRODUCTION_SECRETS = [
  {
    variable: 'OPERATOR_TOKEN',
    key: 'operatorToken',
    defaults: ['dev-operator-token', 'test-operator-token'],
    minLength: 32,
    roles: ['api'],
  },
  {
    variable: 'SMS_GATEWAY_AUTH_TOKEN',
    key: 'smsGatewayAuthToken',
    defaults: ['sim-sms-auth-token'],
    minLength: 16,
    roles: ['api', 'worker'],
  },
  { variable: 'WHATSAPP_ACCESS_TOKEN', key: 'whatsappAccessToken', defaults: ['sim-wa-access-token'], minLength: 16, roles: ['worker'] },
  { variable: 'WHATSAPP_APP_SECRET', key: 'whatsappAppSecret', defaults: ['sim-wa-app-secret'], minLength: 16, roles: ['api'] },
  { variable: 'WHATSAPP_VERIFY_TOKEN', key: 'whatsappVerifyToken', defaults: ['sim-wa-verify-token'], minLength: 16, roles: ['api'] },
  { variable: 'DATA_CURSOR_SECRET', key: 'dataCursorSecret', defaults: ['dev-data-cursor-secret'], minLength: 32, roles: ['api'] },
  // The MCP authorization server's cookie and signing keys: whoever holds it could forge a sign-in session.
  { variable: 'OAUTH_SECRET', key: 'oauthSecret', defaults: ['dev-oauth-secret'], minLength: 32, roles: ['api'] },
  // The payment provider: a worker requests payments, queries and reverses them; the API verifies
  // their result callbacks. Daraja's sandbox passkey is public, so it is refused like our defaults.
  // Demanded only of a deployment that names a payment provider (PAYMENT_PROVIDER_URL): one that
  // takes no payments need not invent their secrets.
  {
    variable: 'PAYMENT_CONSUMER_SECRET',
    key: 'paymentConsumerSecret',
    defaults: ['sim-mpesa-consumer-secret'],
    minLength: 16,
    roles: ['worker'],
    onlyWith: 'PAYMENT_PROVIDER_URL',
  },
  {
    variable: 'PAYMENT_PASSKEY',
    key: 'paymentPasskey',
    defaults: ['sim-mpesa-passkey', 'bfb279f9aa9bdbcf158e97dd71a467cd2e0c893059b10f78e6b72ada1ed2c919'],
    minLength: 16,
    roles: ['worker'],
    onlyWith: 'PAYMENT_PROVIDER_URL',
  },
  {
    variable: 'PAYMENT_SECURITY_CREDENTIAL',
    key: 'paymentSecurityCredential',
    defaults: ['sim-mpesa-security-credential'],
    minLength: 16,
    roles: ['worker'],
    onlyWith: 'PAYMENT_PROVIDER_URL',
  },
  {
    variable: 'PAYMENT_CALLBACK_SECRET',
    key: 'paymentCallbackSecret',
    defaults: ['sim-payment-callback-secret'],
    minLength: 16,
    roles: ['api'],
    onlyWith: 'PAYMENT_PROVIDER_URL',
  },
] as const satisfies ReadonlyArray<{
  variable: string;
  key: keyof Config;
  defaults: readonly string[];
  minLength: number;
  roles: readonly SecretRole[];
  /** Demanded only when this variable is set (the feature it serves is configured). */
  onlyWith?: string;
}>;

/**
 * What marks a documented example rather than a secret: the `change-me-…` values of
 * deploy/example.env (long enough to pass the length rule, so length alone would let them through),
 * and the usual spellings of a placeholder in docs and tutorials (`changeme`, `replace-me`,
 * `your-token`, `<secret>`, `example`, `placeholder`). A random secret contains none of them.
 */
const PLACEHOLDER_MARKS = /change[-_ ]?me|replace[-_ ]?me|placeholder|example|(^|[-_ ])your[-_ ]|<[^>]*>/i;

/** True when the value reads as a documented example (PLACEHOLDER_MARKS), whatever its length. */
export function isPlaceholderSecret(value: string): boolean {
  return PLACEHOLDER_MARKS.test(value);
}

/**
 * Database passwords anyone would try first: PostgreSQL images' and tutorials' defaults, the
 * placeholder of deploy/example.env, and the one the embedded server had before each data directory
 * got its own (scripts/embedded-pg.ts). Compared without case; placeholders (isPlaceholderSecret)
 * are refused besides.
 */
export const WELL_KNOWN_DATABASE_PASSWORDS = [
  '',
  'postgres',
  'postgresql',
  'password',
  'pass',
  'admin',
  'root',
  'secret',
  'changeme',
  'change-me',
  'change-me-database-password',
  'svc',
  'test',
  '123456',
] as const;

/**
 * True when DATABASE_URL's password is one of WELL_KNOWN_DATABASE_PASSWORDS, a placeholder or the
 * user name. An empty password passes only beside a client certificate (sslcert), which then
 * authenticates.
 */
export function databasePasswordIsWellKnown({ database }: Pick<Config, 'database'>): boolean {
  const password = database.password.toLowerCase();
  if (password === '' && database.ssl && database.ssl.cert !== undefined) return false;
  return (
    (WELL_KNOWN_DATABASE_PASSWORDS as readonly string[]).includes(password) ||
    isPlaceholderSecret(password) ||
    password === database.user.toLowerCase()
  );
}

/**
 * The secret variables the role uses that are unset, a known default, a documented example or too
 * short, and DATABASE_URL when its password is well known (never the value itself); empty outside
 * production.
 */
export function productionSecretProblems(config: Config, env: NodeJS.ProcessEnv = process.env, role: SecretRole = 'api'): string[] {
  if (!config.production) return [];
  const problems = PRODUCTION_SECRETS.filter((s) => {
    if (!(s.roles as readonly SecretRole[]).includes(role)) return false;
    if ('onlyWith' in s && !env[s.onlyWith]) return false;
    const given = env[s.variable];
    const value = config[s.key];
    return !given || (s.defaults as readonly string[]).includes(value) || isPlaceholderSecret(value) || value.length < s.minLength;
  }).map((s): string => s.variable);
  if (databasePasswordIsWellKnown(config)) problems.push('DATABASE_URL');
  return problems;
}

/** Ends the process with one line naming the variables when productionSecretProblems finds any. */
export function refuseDefaultSecrets(config: Config, env: NodeJS.ProcessEnv = process.env, role: SecretRole = 'api'): void {
  const bad = productionSecretProblems(config, env, role);
  if (bad.length === 0) return;
  process.stderr.write(
    `refusing to start with NODE_ENV=production: set ${bad.join(', ')} to real secrets (not the development defaults nor the examples of deploy/example.env; OPERATOR_TOKEN, DATA_CURSOR_SECRET and OAUTH_SECRET at least 32 characters, the others at least 16; DATABASE_URL with a password that is not a well-known default)\n`,
  );
  process.exit(1);
}

const optionalCount = (name: string, least = 1): number | null => {
  const raw = env(name, '');
  if (raw === '') return null;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < least) throw new Error(`${name} must be a whole number of at least ${least}, not "${raw}"`);
  return n;
};

/** A number of at least 0 (fractions allowed), the fallback when unset. */
const nonNegative = (name: string, fallback: number): number => {
  const raw = env(name, '');
  if (raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number of at least 0, not "${raw}"`);
  return n;
};

/**
 * Database connections per process when DATABASE_POOL_MAX is unset: the API's requests hold one for a
 * transaction at a time; the worker runs up to 40 activities at once (worker/create-worker.ts). Three
 * APIs and two workers at these defaults need 140 of PostgreSQL's max_connections.
 */
export const POOL_DEFAULTS = { api: 20, worker: 40 } as const;

export const poolMaxOf = (config: Pick<Config, 'databasePoolMax'>, role: keyof typeof POOL_DEFAULTS): number =>
  config.databasePoolMax ?? POOL_DEFAULTS[role];

/**
 * The pool's idle timeout in ms (pg's 0: never closed). pg's own default, 10 s, closed the
 * connections a burst had opened once the steady load behind it used fewer (the pool hands out the
 * most recently used first), and the next burst opened them again: a new backend loads its catalog
 * caches and plans every named statement afresh. At 500 sends a second that was 14 connections
 * opened in one 30 s window, and 1–5 with 300 s (docs/benchmarks.md). The pool's maximum still
 * bounds what a process holds.
 */
export const poolIdleMillis = (config: Pick<Config, 'databasePoolIdleSeconds'>): number =>
  Math.round(config.databasePoolIdleSeconds * 1000);

/** The driver's read deadline runs this much past the server's statement_timeout, so the server's own cancel (a clean error) comes first. */
export const QUERY_TIMEOUT_MARGIN_MS = 1000;

/**
 * The API's database connection with its request bounds: statement_timeout and the driver's read
 * deadline, and the pool's acquire/connect timeout, each unless DATABASE_URL already set it (a
 * `connect_timeout`, or `options=-c statement_timeout=…`). The worker does not take them: its
 * activities have their own Temporal timeouts, and some statements (index builds) run long on purpose.
 */
export function requestBoundedDatabase(
  config: Pick<Config, 'database' | 'databaseStatementTimeoutMs' | 'databaseAcquireTimeoutMs'>,
): PgConnection {
  const db = config.database;
  const statementSet = /statement_timeout/.test(db.options ?? '');
  return {
    ...db,
    connectionTimeoutMillis: db.connectionTimeoutMillis || config.databaseAcquireTimeoutMs,
    ...(statementSet ? {} : { statement_timeout: config.databaseStatementTimeoutMs }),
    query_timeout: config.databaseStatementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS,
  };
}

/** What the pg driver's Pool takes for one server (a subset of pg.PoolConfig, spelled out so entities/ need not import this file). */
export interface PgConnection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** false: plain TCP. Otherwise Node's TLS options, as sslmode asks (see parseDatabaseUrl). */
  ssl: false | TlsConnectionOptions;
  application_name?: string;
  options?: string;
  connectionTimeoutMillis?: number;
  /** The server's statement_timeout for each session, in ms (sent when the session opens). */
  statement_timeout?: number;
  /** The driver's own deadline for a statement's answer, in ms: it holds when the server cannot even cancel one. */
  query_timeout?: number;
  keepAlive?: boolean;
  keepAliveInitialDelayMillis?: number;
}

export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const;

/** Query parameters of a libpq URL and the PG* variables libpq reads when the URL leaves them out. */
const URL_PARAMS: Record<string, string | null> = {
  sslmode: 'PGSSLMODE',
  sslrootcert: 'PGSSLROOTCERT',
  sslcert: 'PGSSLCERT',
  sslkey: 'PGSSLKEY',
  sslpassword: null,
  application_name: 'PGAPPNAME',
  connect_timeout: 'PGCONNECT_TIMEOUT',
  options: 'PGOPTIONS',
  keepalives: null,
  keepalives_idle: null,
  host: null,
  port: null,
  user: null,
  password: null,
  dbname: null,
};

/**
 * DATABASE_URL read the way libpq reads it, for the pg driver (which MikroORM would otherwise hand
 * only host, port, user, password and database, silently dropping `sslmode`):
 *
 * - `disable`: plain TCP. `allow` and `prefer` also connect in plain text: pg cannot try TLS and fall
 *   back, so a deployment that wants encryption says `require` or stricter (docs/deploy.md).
 * - `require`: TLS without checking the certificate; with `sslrootcert` it checks the chain, as
 *   libpq does (then it is `verify-ca`).
 * - `verify-ca`: TLS, the chain checked against `sslrootcert` (or Node's CA store), any host name.
 * - `verify-full`: TLS, chain and host name checked. `sslrootcert=system` means Node's CA store and,
 *   as in libpq 16, only with verify-full.
 * - `sslcert`/`sslkey` (and `sslpassword`): a client certificate. Files are read now, so a missing
 *   one stops the process at start, naming the file.
 *
 * A parameter this driver cannot honour is refused rather than ignored.
 */
export function parseDatabaseUrl(
  url: string,
  environment: NodeJS.ProcessEnv = {},
  readFile: (file: string) => string = (f) => fs.readFileSync(f, 'utf8'),
): PgConnection {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error('DATABASE_URL is not a URL (postgres://user:password@host:5432/database?sslmode=require)');
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:')
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql://, not ${u.protocol}//`);
  for (const key of u.searchParams.keys())
    if (!(key in URL_PARAMS))
      throw new Error(`DATABASE_URL parameter "${key}" is not supported (supported: ${Object.keys(URL_PARAMS).join(', ')})`);
  const param = (name: string): string | undefined => {
    const v = u.searchParams.get(name);
    if (v !== null && v !== '') return v;
    const variable = URL_PARAMS[name];
    const fromEnv = variable ? environment[variable] : undefined;
    return fromEnv === undefined || fromEnv === '' ? undefined : fromEnv;
  };
  const host = param('host') ?? decodeURIComponent(u.hostname.replace(/^\[(.*)\]$/, '$1'));
  if (host.includes(',')) throw new Error('DATABASE_URL names several hosts; the pg driver connects to one');
  const seconds = (name: string): number | undefined => {
    const v = param(name);
    if (v === undefined) return undefined;
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0) throw new Error(`DATABASE_URL ${name} must be a number of seconds, not "${v}"`);
    return n;
  };
  const connectTimeout = seconds('connect_timeout');
  const keepalives = param('keepalives');
  const keepalivesIdle = seconds('keepalives_idle');
  const out: PgConnection = {
    host: host || '127.0.0.1',
    port: Number(param('port') ?? (u.port || 5432)),
    user: param('user') ?? decodeURIComponent(u.username),
    password: param('password') ?? decodeURIComponent(u.password),
    database: param('dbname') ?? decodeURIComponent(u.pathname.replace(/^\//, '')),
    ssl: sslOptions(param, readFile),
  };
  const app = param('application_name');
  if (app !== undefined) out.application_name = app;
  const options = param('options');
  if (options !== undefined) out.options = options;
  // libpq's connect_timeout 0 means wait for ever, which is also pg's 0.
  if (connectTimeout !== undefined) out.connectionTimeoutMillis = Math.round(connectTimeout * 1000);
  if (keepalives !== undefined) out.keepAlive = keepalives !== '0';
  if (keepalivesIdle !== undefined) out.keepAliveInitialDelayMillis = Math.round(keepalivesIdle * 1000);
  return out;
}

function sslOptions(param: (name: string) => string | undefined, readFile: (file: string) => string): PgConnection['ssl'] {
  const rootcert = param('sslrootcert');
  const mode = param('sslmode') ?? (rootcert === 'system' ? 'verify-full' : 'disable');
  if (!(SSL_MODES as readonly string[]).includes(mode))
    throw new Error(`DATABASE_URL sslmode must be one of ${SSL_MODES.join(', ')}, not "${mode}"`);
  if (mode === 'disable' || mode === 'allow' || mode === 'prefer') return false;
  if (rootcert === 'system' && mode !== 'verify-full')
    throw new Error(`DATABASE_URL sslrootcert=system needs sslmode=verify-full, not ${mode}`);
  const file = (name: string, path: string | undefined): string | undefined => {
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (err) {
      throw new Error(`DATABASE_URL ${name}: cannot read ${path} (${(err as Error).message})`, { cause: err });
    }
  };
  const ssl: TlsConnectionOptions = {};
  const ca = rootcert === 'system' ? undefined : file('sslrootcert', rootcert);
  if (ca !== undefined) ssl.ca = ca;
  const cert = file('sslcert', param('sslcert'));
  const key = file('sslkey', param('sslkey'));
  if ((cert === undefined) !== (key === undefined)) throw new Error('DATABASE_URL needs both sslcert and sslkey for a client certificate');
  if (cert !== undefined) Object.assign(ssl, { cert, key });
  const passphrase = param('sslpassword');
  if (passphrase !== undefined) ssl.passphrase = passphrase;
  const verify = mode === 'verify-full' ? 'full' : mode === 'verify-ca' || ca !== undefined ? 'chain' : 'none';
  if (verify === 'none') ssl.rejectUnauthorized = false;
  else {
    ssl.rejectUnauthorized = true;
    // The chain is checked, the name on the certificate is not: libpq's verify-ca.
    if (verify === 'chain') ssl.checkServerIdentity = () => undefined;
  }
  return ssl;
}

/** A Temporal connection as both the client's Connection and the worker's NativeConnection take it. */
export interface TemporalConnectionOptions {
  address: string;
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/**
 * The Temporal connection through @temporalio/envconfig, Temporal's own variables: TEMPORAL_ADDRESS,
 * TEMPORAL_NAMESPACE, TEMPORAL_API_KEY (TLS on by itself), TEMPORAL_TLS, TEMPORAL_TLS_CLIENT_CERT_PATH /
 * _DATA and TEMPORAL_TLS_CLIENT_KEY_PATH / _DATA (mTLS), TEMPORAL_TLS_SERVER_CA_CERT_PATH / _DATA,
 * TEMPORAL_TLS_SERVER_NAME, TEMPORAL_GRPC_META_<NAME>. A TOML profile file is read only when
 * TEMPORAL_CONFIG_FILE names it (TEMPORAL_PROFILE picks the profile): never the one in the home
 * directory, so what a process connects to is in its environment.
 */
export function temporalConnectConfig(environment: NodeJS.ProcessEnv): { connection: TemporalConnectionOptions; namespace: string } {
  // An empty variable is unset here as everywhere in this file (envconfig would take '' as a value).
  const given = Object.fromEntries(
    Object.entries(environment).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );
  const loaded = loadClientConnectConfig({ overrideEnvVars: given, disableFile: given.TEMPORAL_CONFIG_FILE === undefined });
  const o = loaded.connectionOptions;
  const connection: TemporalConnectionOptions = { address: o.address ?? '127.0.0.1:7233' };
  if (o.tls !== undefined && o.tls !== null) connection.tls = o.tls;
  if (typeof o.apiKey === 'string') connection.apiKey = o.apiKey;
  if (o.metadata && Object.keys(o.metadata).length > 0) connection.metadata = o.metadata as Record<string, string>;
  return { connection, namespace: loaded.namespace ?? 'default' };
}
