// The leads family's pure rules: stages and their moves, how a person is named (identities), who sees what.
export * from './stages.js';
export * from './identities.js';
