// The shop family's words and pure rules as other families see them.
export * from './vocabulary.js';
