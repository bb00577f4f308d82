// The data family's words and pure rules as other families (and the doors) see them.
export * from './vocabulary.js';
export * from './definitions.js';
export * from './access.js';
export * from './expressions.js';
