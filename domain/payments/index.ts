// The payments family's words and pure rules as other layers see them.
export * from './states.js';
export * from './reference.js';
export * from './money.js';
export * from './ledger.js';
export * from './reconciliation.js';
