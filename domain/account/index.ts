// The account family's pure rules as other families see them.
export { hasPermission, isPermission, PERMISSIONS, type Permission } from './permissions.js';
