// The catalogue family's words and pure rules as other families (orders, shop) see them.
export * from './vocabulary.js';
export * from './storefront.js';
