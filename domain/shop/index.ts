// The shop family's pure rules as other families (catalogues: the storefront settings) see them.
export { STOREFRONT_DEFAULTS, STOREFRONT_RANGES } from './cart.js';
