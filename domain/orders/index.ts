// The order family's words and pure rules as other families see them.
export * from './vocabulary.js';
export { currencyExponent } from './money.js';
