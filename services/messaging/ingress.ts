// Provider ingress: the one place the API reaches provider adapters. The registry says which
// webhooks exist; each request is verified and parsed by its provider's adapter (nothing is read
// before the signature holds), and the events, already in our vocabulary, are applied here.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Logger } from '../../logger.js';
import {
  MalformedWebhook,
  providerRegistry,
  type Provider,
  type ProviderEvent,
  type ChatOrderMessage,
  type ProviderKey,
  type ProviderSettings,
  type WebhookAnswer,
  type WebhookEndpoint,
  type WebhookRequest,
} from '../../providers/index.js';
import { badRequest, forbidden } from '../platform/errors.js';
import { applyReceipt } from './receipts.js';
import { applyParkableStatus, receiveInbound } from './inbound.js';

export type { WebhookAnswer, WebhookRequest, ProviderKey } from '../../providers/index.js';

export interface IngressDeps {
  orm: MikroORM;
  temporal: Client;
  config: ProviderSettings;
  /** Where an event that changes nothing for a known reason is told (a chat order for an unknown catalogue). */
  log?: Logger;
  /** Other families' readers of each verified notification, subscribed where the API wires the services (chat groups). */
  inboundHooks?: readonly InboundWebhookHook[];
  /** Who makes a cart sent from the provider's catalogue into an order (orders); without it the cart is stored as a message only. */
  chatOrders?: ChatOrderHook;
}

/** Stores a cart message (through receiveInbound) and makes its order in the same transaction. */
export type ChatOrderHook = (e: ChatOrderMessage) => Promise<unknown>;

/** Runs after a verified notification's own events were applied; reads what its family owns from the same request. */
export type InboundWebhookHook = (provider: ProviderKey, req: WebhookRequest) => Promise<void>;

/** One endpoint a provider calls, ready to serve: what it is (for routing and OpenAPI) and how it is answered. */
export interface ProviderWebhook extends Pick<WebhookEndpoint, 'method' | 'path' | 'summary' | 'answer' | 'query'> {
  provider: ProviderKey;
  /** Verifies, parses and applies one request; resolves with the answer once its effects are stored. */
  receive(req: WebhookRequest): Promise<WebhookAnswer>;
}

/** Every provider webhook of the registry. */
export function providerWebhooks(deps: IngressDeps): ProviderWebhook[] {
  return providerRegistry(deps.config).all.flatMap((provider) =>
    provider.webhooks.map((endpoint) => ({
      provider: provider.key,
      method: endpoint.method,
      path: endpoint.path,
      summary: endpoint.summary,
      answer: endpoint.answer,
      query: endpoint.query,
      receive: (req: WebhookRequest) => receiveWebhook(deps, provider, endpoint, req),
    })),
  );
}

async function receiveWebhook(
  deps: IngressDeps,
  provider: Provider,
  endpoint: WebhookEndpoint,
  req: WebhookRequest,
): Promise<WebhookAnswer> {
  if (endpoint.handshake) {
    const answer = endpoint.handshake(req);
    if (!answer) throw forbidden('Verification failed.');
    return answer;
  }
  if (!provider.verifySignature(req)) throw forbidden('Invalid provider signature.');
  let events: ProviderEvent[];
  try {
    events = endpoint.parse ? endpoint.parse(req) : [];
  } catch (err) {
    if (err instanceof MalformedWebhook) throw badRequest(err.message);
    throw err;
  }
  for (const e of events) await applyEvent(deps, provider, e);
  // What else the notification carries belongs to the families that subscribed (group changes and messages into groups).
  if (endpoint.parse) for (const hook of deps.inboundHooks ?? []) await hook(provider.key, req);
  return endpoint.answer;
}

/**
 * Statuses that name our uid (or come from a provider whose statuses cannot overtake the send) go to
 * the group-committed receipt writer; those keyed by the provider's id alone may wait for the send's
 * answer in pending_receipts. Inbound messages are stored and open the conversation window.
 */
async function applyEvent(deps: IngressDeps, provider: Provider, e: ProviderEvent): Promise<void> {
  if (e.type === 'inbound') {
    await receiveInbound(deps, e);
    return;
  }
  if (e.type === 'order') {
    await (deps.chatOrders ? deps.chatOrders(e) : receiveInbound(deps, e));
    return;
  }
  if (e.uid || !provider.statusesMayPrecedeSend) await applyReceipt(deps, e);
  else await applyParkableStatus(deps, e);
}
