// The contacts family as other families see it: which groups a request names, and the contacts a group holds.
export { groupRef } from './contact-groups.js';
export { groupsAmong, groupById, type GroupRef } from './store/groups.js';
export { audiencePage, accountAudiencePage, type AudienceRow, type AccountAudience } from './store/contacts.js';
