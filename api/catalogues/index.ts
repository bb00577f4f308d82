// What the shop and orders doors share with the catalogue door: the MCP exposure and permissions.
export { catalogueTools, shopTools, CATALOGUE_VIEW, CATALOGUE_MANAGE } from './catalogues.js';
