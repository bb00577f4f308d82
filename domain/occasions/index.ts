// The occasions family's pure rules: the calendar, the catalogue, how a card reads its layers.
export * from './dates.js';
export * from './catalogue.js';
export * from './cards.js';
