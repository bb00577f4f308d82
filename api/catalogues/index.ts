// What the shop and orders doors share with the catalogue door: the MCP exposure and permissions.
export { shopTools, shopWriteTools, CATALOGUE_VIEW, CATALOGUE_MANAGE } from './catalogues.js';
