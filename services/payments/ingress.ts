import type { MikroORM } from '@mikro-orm/postgresql';
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import {
  MalformedWebhook,
  providerRegistry,
  type PaymentCallbackEndpoint,
  type PaymentEvent,
  type PaymentProvider,
  type ProviderSettings,
  type WebhookAnswer,
  type WebhookRequest,
} from '../../providers/index.js';
import { signalWorkflow } from '../../temporal/starters.js';
import { paymentStarter, paymentWorkflowId } from '../../workflows/payments/payment.starter.js';
import { isSettled } from '../../domain/payments/index.js';
import { badRequest, forbidden } from '../platform/errors.js';
import { keepReceipt, paymentForCallback } from './store.js';
import { forwardRefundResult } from './refunds.js';

// The payment provider's result callbacks (docs/payments.md, Provider): verified over their exact
// bytes before anything is read (unsigned, forged, tampered or stale: 403, as every webhook), parsed
// by the adapter into our words, matched to a payment, and handed to the payment's workflow as a
// signal. The workflow decides what a result does (and drops one it has seen); the ingress never
// moves a payment itself. It only keeps a paid result's receipt on a payment that has none, so a
// payment settled by a status poll learns its receipt from the callback that comes after. A callback for no payment we know, or for one whose workflow has closed,
// is answered as accepted and logged: the provider would only retry it, and there is nothing to start
// a workflow for (signal-with-start would make a workflow for a payment that does not exist).

export interface PaymentIngressDeps {
  orm: MikroORM;
  temporal: Client;
  config: ProviderSettings;
  log: Logger;
}

/** One payment callback endpoint, ready to serve (the same shape as the messaging webhooks). */
export interface PaymentWebhook extends Pick<PaymentCallbackEndpoint, 'method' | 'path' | 'summary' | 'answer' | 'query'> {
  provider: string;
  receive(req: WebhookRequest): Promise<WebhookAnswer>;
}

/** The configured payment provider's callbacks. */
export function paymentWebhooks(deps: PaymentIngressDeps): PaymentWebhook[] {
  const provider = providerRegistry(deps.config).payments();
  return provider.callbacks.map((endpoint) => ({
    provider: provider.key,
    method: endpoint.method,
    path: endpoint.path,
    summary: endpoint.summary,
    answer: endpoint.answer,
    query: endpoint.query,
    receive: (req: WebhookRequest) => receivePaymentCallback(deps, provider, endpoint, req),
  }));
}

async function receivePaymentCallback(
  deps: PaymentIngressDeps,
  provider: PaymentProvider,
  endpoint: PaymentCallbackEndpoint,
  req: WebhookRequest,
): Promise<WebhookAnswer> {
  if (!provider.verifyCallback(req)) throw forbidden('Invalid provider signature.');
  let events: PaymentEvent[];
  try {
    events = endpoint.parse(req);
  } catch (err) {
    if (err instanceof MalformedWebhook) throw badRequest(err.message);
    throw err;
  }
  for (const e of events) await forward(deps, provider, e);
  return { status: endpoint.answer.status, body: endpoint.answer.body, contentType: endpoint.answer.contentType };
}

async function forward(deps: PaymentIngressDeps, provider: PaymentProvider, e: PaymentEvent): Promise<void> {
  const about = { provider: provider.key, providerRef: e.providerRef, reference: e.reference, type: e.type };
  if (e.type === 'refund_result') return forwardRefundResult(deps, provider.key, e);
  const payment = await paymentForCallback(deps.orm.em.fork(), provider.key, e.providerRef, e.reference);
  if (!payment || payment.is_refund) {
    deps.log.warn(about, 'payment callback for no known payment ignored');
    return;
  }
  // The receipt is kept here, whatever the workflow does with the result: a callback that repeats
  // what a status poll already settled (the poll carries no receipt) is dropped by the workflow as
  // seen, or comes after the workflow closed, and its receipt is still what a refund reverses.
  if (e.outcome === 'paid' && e.receipt) {
    const kept = await keepReceipt(deps.orm.em.fork(), payment.id, e.receipt);
    if (kept && isSettled(payment.state))
      deps.log.info({ ...about, paymentId: payment.id, state: payment.state }, 'receipt of a settled payment learnt from a late callback');
  }
  try {
    await signalWorkflow(deps.temporal, paymentStarter, paymentWorkflowId(payment.account_id, payment.id), 'paymentResult', {
      eventId: `${e.providerRef}:${e.outcome}`,
      providerRef: e.providerRef,
      outcome: e.outcome,
      reason: e.reason,
      providerCode: e.providerCode,
      message: e.message,
      receipt: e.receipt,
      amountMinor: e.amountMinor,
      currency: e.currency ?? null,
    });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
    deps.log.warn(
      { ...about, paymentId: payment.id, state: payment.state },
      'payment callback ignored: the payment has no running workflow',
    );
  }
}
