// A cart a customer sends from the chat provider's catalogue (WhatsApp's `order` message): stored as
// an inbound message like any other (the conversation and its 24-hour window stay right) and, in the
// same transaction, made into an order of the shop whose provider catalogue it names. The order's
// stock holds start once that transaction has committed.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { exec } from '../../entities/db.js';
import type { ChatOrderMessage } from '../../providers/index.js';
import { createOrder, type CreatedOrder, type CreateOrderInput } from './orders.js';
import { startOrderHoldAfterCommit } from './holds.js';
import { majorToHundredths } from '../../domain/orders/money.js';
import { DomainError, describeDomainError } from '../platform/errors.js';
import { isShopClosed, shopOfProviderCatalogue } from '../catalogues/index.js';
import { noteOnMessage, receiveInbound } from '../messaging/index.js';
import { afterPaymentRequested, requestOrderPayment, type PaymentSummary } from '../payments/index.js';

export interface ChatOrderDeps {
  orm: MikroORM;
  temporal: Client;
  config: Partial<Config>;
  log?: Logger;
}

/**
 * The order's lines as the customer sent them. Item prices arrive in major units and lines keep
 * hundredths (the contract states total_amount in hundredths): converted at the currency's own
 * precision, so a JPY 300 line is 30000 hundredths and 19.99 is 1999. A line without a readable
 * price takes the shop's price for the product.
 */
export function orderLines(e: ChatOrderMessage): CreateOrderInput['lines'] {
  return e.order.items.map((i) => ({
    retailerId: i.retailerId,
    quantity: i.quantity,
    unitPriceMinor: i.itemPrice === null || i.itemPrice < 0 ? null : majorToHundredths(i.itemPrice, i.currency ?? 'USD'),
  }));
}

type Outcome =
  | (CreatedOrder & { payment: PaymentSummary | null })
  | { skipped: 'unknown_catalogue' | 'no_items' | 'invalid' | 'shop_closed'; problem?: string };

/**
 * Stores the message and creates its order. The shop is the one of the receiving number's account
 * whose meta_catalogue_id the order names; a catalogue no shop of that account has (another
 * tenant's, or one deleted since) makes no order: the message is still stored, with the reason in
 * its metadata, and the service log says so. So does an order the order rules refuse (more lines
 * than an order may hold), and so does an order to the shop of a suspended account (closed: no
 * order, no unit held; the cart as sent stays in the message's metadata for the shop to read once
 * reinstated): a webhook answered with an error would only be redelivered for days. A
 * redelivered webhook stores nothing and makes no second order (the message's provider id is
 * recorded once per account, and so is the order's).
 */
export async function receiveChatOrder(deps: ChatOrderDeps, e: ChatOrderMessage): Promise<CreatedOrder | null> {
  const result = await receiveInbound(deps, e, async (tx, stored): Promise<Outcome> => {
    const note = async (fields: Record<string, unknown>) => noteOnMessage(tx, stored.messageId, fields);
    const shop = e.order.catalogueId ? await shopOfProviderCatalogue(tx, stored.accountId, e.order.catalogueId) : null;
    const lines = orderLines(e);
    if (!shop || !lines.length) {
      const skipped = shop ? 'no_items' : 'unknown_catalogue';
      await note({ order_status: 'not_created', order_reason: skipped });
      return { skipped };
    }
    // Only the order's own writes are undone when the order rules refuse it; the message stays.
    await exec(tx, 'savepoint chat_order');
    let created: CreatedOrder;
    try {
      created = await createOrder(tx, {
        accountId: stored.accountId,
        catalogueId: shop.id,
        platform: 'whatsapp',
        customerHandle: stored.customer,
        providerMessageId: e.providerMessageId,
        note: e.order.text,
        currency: e.order.items.find((i) => i.currency)?.currency ?? undefined,
        lines,
      });
    } catch (err) {
      // A suspended account's shop takes no order: the cart as sent stays on the message (metadata.order).
      if (isShopClosed(err)) {
        await exec(tx, 'rollback to savepoint chat_order');
        await note({ order_status: 'not_created', order_reason: 'shop_closed' });
        return { skipped: 'shop_closed' };
      }
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      await exec(tx, 'rollback to savepoint chat_order');
      await note({ order_status: 'not_created', order_reason: 'invalid', order_problem: describeDomainError(err) });
      return { skipped: 'invalid', problem: describeDomainError(err) };
    }
    await exec(tx, 'release savepoint chat_order');
    // The order's payment, for its total, from the customer's number (a redelivery made no order and makes no payment).
    const payment =
      created.total &&
      (await requestOrderPayment(tx, {
        accountId: stored.accountId,
        orderId: created.orderId,
        totalMinor: created.total.minor,
        currency: created.total.currency,
        customer: stored.customer,
        source: 'chat_order',
        createdBy: 'system:chat-order',
      }));
    await note({ order_id: created.orderId });
    return { ...created, payment };
  });
  const outcome = result.also;
  if (!outcome) return null;
  if ('skipped' in outcome) {
    deps.log?.warn(
      { uid: result.uid, catalogId: e.order.catalogueId, reason: outcome.skipped, problem: outcome.problem },
      'chat order message stored without an order',
    );
    return null;
  }
  const { payment, ...created } = outcome;
  await startOrderHoldAfterCommit(deps, created);
  await afterPaymentRequested(deps, payment, created.accountId);
  return created;
}
