// The catalogue family as other families see it (orders, baskets and product sends, next).
export { requireShop, type ShopRow } from './shops.js';
export { productViews, productEventFields, type ProductView } from './product-view.js';
export { recordMovements, noticeLowStock, type MovementInput, type LowStockRow } from './stock-ledger.js';
export { requestPush, startPushAfterCommit, startUnstartedPushes, type PushRequest } from './push-requests.js';
export { followAvailableStock } from './inventory.js';
