import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

// One Prometheus registry per process. Counters are per process, as Prometheus expects: a deployment
// of several APIs and workers is summed over its instances by the query (`sum by (status) (…)`).
// A message's send runs in the API (its creation) and in the worker (the provider's answer and the
// receipts), so each process reports the status changes it recorded itself.

export const registry = new Registry();

let processMetrics = false;
/**
 * Node's own metrics (CPU, memory, event loop lag, GC, handles). Started by the process that serves
 * /metrics, not on import: a test or a CLI that only records counters needs no event-loop monitor.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry });
}

export const httpRequests = new Counter({
  name: 'http_requests_total',
  help: 'HTTP requests answered by this API process, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'Time from receiving a request to its answer being ready, by method and route template.',
  labelNames: ['method', 'route'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

/**
 * Messages that reached a status, counted by the process that recorded the change: `queued` or
 * `failed` when an outbound record is created, then every move (sent, delivered, read, failed…)
 * as services/messaging/message-moves.ts writes it.
 */
export const admissionsInStatement = new Counter({
  name: 'http_admissions_in_statement_total',
  help: 'Requests whose authentication their handler’s own statement made (api/http/auth.ts admittedInStatement), by outcome: admitted there, refused there, or left to the plain authentication.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const earlyReads = new Counter({
  name: 'http_early_reads_total',
  help: 'Reads started beside their authentication (api/http/speculation.ts), by whether their answer was used or dropped.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const messageStatuses = new Counter({
  name: 'svc_messages_total',
  help: 'Outbound messages that reached a status, by status (counted where the change was recorded).',
  labelNames: ['status'] as const,
  registers: [registry],
});

/** Counts statuses recorded in one write; `rows` are the records that actually moved or were created. */
export function countMessageStatuses(rows: ReadonlyArray<{ status: string }>): void {
  for (const r of rows) messageStatuses.inc({ status: r.status });
}

/**
 * Webhook and automation delivery attempts by what became of them: delivered, failed (final: no
 * retry follows), retry (a failed attempt with another one scheduled) or skipped (the endpoint or
 * event was gone before the POST).
 */
export const webhookDeliveries = new Counter({
  name: 'svc_webhook_deliveries_total',
  help: 'Webhook delivery attempts recorded by this worker, by outcome (delivered, failed, retry, skipped).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** The route label: the router's path template, never the raw URL (one series per route, not per id). */
export function routeLabel(stateRoute: unknown, matchedRoute: unknown): string {
  if (typeof stateRoute === 'string') return stateRoute.slice(stateRoute.indexOf(' ') + 1);
  if (typeof matchedRoute === 'string') return matchedRoute.replace(/:(\w+)/g, '{$1}');
  return 'unmatched';
}

/** Counts one logged delivery attempt under what became of it (see webhookDeliveries). */
export function countWebhookAttempt(outcome: 'succeeded' | 'failed' | 'gone' | 'skipped', final: boolean, n = 1): void {
  const label = outcome === 'succeeded' ? 'delivered' : outcome === 'skipped' ? 'skipped' : final ? 'failed' : 'retry';
  webhookDeliveries.inc({ outcome: label }, n);
}
