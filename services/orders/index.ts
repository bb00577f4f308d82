// The orders family as other families see it (chat orders, basket submissions).
export { createOrder, orderView, type CreateOrderInput, type CreateOrderLineInput, type CreatedOrder, type OrderView } from './orders.js';
export { startOrderHoldAfterCommit } from './holds.js';
// An order's payment paid: the payments family tells us in its move's transaction (the worker wires it: activities/index.ts).
export { orderPaid } from './paid.js';
// A cart sent from the chat provider's catalogue, made an order (messaging's ingress calls it: api/http/ingress.ts wires it).
export { receiveChatOrder, orderLines } from './chat-orders.js';
export { majorToHundredths, currencyExponent } from '../../domain/orders/money.js';
