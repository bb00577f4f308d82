// The catalogue family as other families see it (orders, baskets and product sends, next).
export { requireShop, type ShopRow } from './shops.js';
export { requireShopOpen, isShopClosed } from './shop-open.js';
export { productViews, productEventFields, type ProductView } from './product-view.js';
export { recordMovements, noticeLowStock, type MovementInput, type LowStockRow } from './stock-ledger.js';
export { requestPush, startPushAfterCommit, startUnstartedPushes, type PushRequest } from './push-requests.js';
export { followAvailableStock } from './inventory.js';
// What orders and the shop read and move of a catalogue (services/catalogues/store/storefront.ts).
export {
  shopForOrder,
  shopStockPolicy,
  shopName,
  shopBasketCaps,
  shopAddressLimit,
  shopIdsOf,
  productsForLines,
  optionPrices,
  productForLine,
  productsForLinesById,
  productForLineBySku,
  productsForLinesBySku,
  productOptions,
  productLabels,
  variantsById,
  addonsById,
  storefrontProductRow,
  menuProducts,
  shopCategories,
  categoryOf,
  hasCategoryWithoutSlug,
  lockCategories,
  setCategorySlug,
  reserveStock,
  releaseReservedStock,
  takeStock,
  type StockFigures,
  type OrderShop,
  type ProductMatch,
  type ProductForLine,
  type ProductOption,
  type MenuProductRow,
  type CategoryRow,
} from './store/storefront.js';

// What a chat order asks: the shop of the provider catalogue it names.
export { shopOfProviderCatalogue } from './store/shops.js';
