export * from './definition.js';
export * from './answers.js';
export * from './native.js';
