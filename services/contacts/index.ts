// The contacts family as other families see it: which contacts a group holds.
export { groupCondition } from './contact-groups.js';
