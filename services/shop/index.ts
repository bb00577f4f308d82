// The shop family (shop links, baskets, the shop page) as other families and the worker see it.
export { judgeQuietCart, nudgeCartTimer, type QuietVerdict } from './timers.js';
export { cartSchema, cartViews, cartEventFields, type CartView } from './carts.js';
