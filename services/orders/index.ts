// The orders family as other families see it (chat orders, basket submissions).
export { createOrder, orderView, type CreateOrderInput, type CreateOrderLineInput, type CreatedOrder, type OrderView } from './orders.js';
export { startOrderHoldAfterCommit } from './holds.js';
export { majorToHundredths, currencyExponent } from '../../domain/orders/money.js';
