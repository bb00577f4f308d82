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
  type InboundMessage,
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
  /** Other families' readers of a customer's one-to-one message, once it is stored (a form or flow session waiting for a reply). */
  replyHooks?: readonly ReplyHook[];
}

/** A customer's one-to-one message just stored (never a provider redelivery), as a conversation waiting for a reply reads it. */
export interface CustomerReply {
  accountId: number;
  /** The stored message's uid: a session that records it twice can tell. */
  uid: string;
  /** E.164 with '+'. */
  customer: string;
  channelType: InboundMessage['channelType'];
  body: string;
  /** What the provider sent beside the text (an interactive reply's id, a native form's answers). */
  metadata: Record<string, unknown>;
}

/**
 * Runs after the message committed. A hook that fails is the provider's retry (the webhook answers
 * 5xx); the redelivery stores nothing new and calls no hook, so a hook must not depend on running
 * exactly once for its effect to hold (a session that misses a reply re-asks on its own timer).
 */
export type ReplyHook = (reply: CustomerReply) => Promise<void>;

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
    const r = await receiveInbound(deps, e, async (_tx, stored) => stored);
    if (r.also && deps.replyHooks?.length) {
      const reply: CustomerReply = {
        accountId: r.also.accountId,
        uid: r.also.uid,
        customer: r.also.customer,
        channelType: e.channelType,
        body: e.body,
        metadata: e.metadata ?? {},
      };
      for (const hook of deps.replyHooks) await hook(reply);
    }
    return;
  }
  if (e.type === 'order') {
    await (deps.chatOrders ? deps.chatOrders(e) : receiveInbound(deps, e));
    return;
  }
  if (e.uid || !provider.statusesMayPrecedeSend) await applyReceipt(deps, e);
  else await applyParkableStatus(deps, e);
}
