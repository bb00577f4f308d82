import type { AppDeps } from './http/app.js';
import type { RouteDef } from './http/registry.js';
import type { Operation } from './operation.js';
import { restRoute } from './http/rest.js';
import { docsRoutes } from './http/docs.js';
import { accountOperations } from './account/profile.js';
import { accountSettingsOperations } from './account/settings.js';
import { smsOperations } from './messaging/sms.js';
import { whatsappOperations } from './messaging/whatsapp.js';
import { ingressRoutes } from './http/ingress.js';
import { automationOperations } from './automations/automations.js';
import { automationSettingsOperations } from './automations/settings.js';
import { webhookSettingsOperations } from './webhooks/settings.js';
import { contactCompatOperations, contactOperations } from './contacts/contacts.js';
import { contactGroupOperations } from './contacts/contact-groups.js';
import { campaignOperations } from './campaigns/campaigns.js';
import { inventoryOperations } from './catalogues/inventory.js';
import { catalogueOperations } from './catalogues/catalogues.js';
import { productOperations } from './catalogues/products.js';
import { catalogueSyncOperations } from './catalogues/syncs.js';
import { catalogueFeedOperations } from './catalogues/feeds.js';
import { noticeOperations, noticeSettingsOperations } from './account/notices.js';
import { shopLinkOperations } from './shop/links.js';
import { cartOperations } from './shop/carts.js';
import { shopPageRoutes } from './shop/page.js';
import { orderOperations } from './orders/orders.js';
import { productSendOperations } from './catalogues/product-sends.js';
import { tableOperations } from './data/tables.js';
import { recordListOperations } from './data/records-list.js';
import { recordOperations } from './data/records.js';
import { groupOperations } from './data/groups.js';
import { dataSettingsOperations } from './data/settings.js';
import { chatGroupOperations } from './groups/groups.js';
import { groupMemberOperations } from './groups/members.js';
import { groupMessageOperations } from './groups/messages.js';

/** Every account operation of the contract, in routing order (fixed paths before `{param}` ones). */
export const customerOperations: readonly Operation[] = [
  ...accountOperations,
  ...smsOperations,
  ...whatsappOperations,
  ...automationOperations,
  ...contactCompatOperations,
  ...contactOperations,
  ...contactGroupOperations,
  ...campaignOperations,
  ...inventoryOperations,
  ...orderOperations,
  ...productSendOperations,
  ...catalogueOperations,
  ...productOperations,
  ...catalogueSyncOperations,
  ...catalogueFeedOperations,
  ...noticeOperations,
  ...shopLinkOperations,
  ...cartOperations,
  ...tableOperations,
  ...recordListOperations,
  ...recordOperations,
  ...groupOperations,
  ...groupMemberOperations,
  ...groupMessageOperations,
  ...chatGroupOperations,
];

/**
 * Every operator operation ("Settings", under /admin/v1, operator token), in routing order. Each is
 * also an admin CLI command: scripts/admin.ts is generated from their `cli` entries.
 */
export const operatorOperations: readonly Operation[] = [
  ...accountSettingsOperations,
  ...webhookSettingsOperations,
  ...automationSettingsOperations,
  ...noticeSettingsOperations,
  ...dataSettingsOperations,
];

/** Every route of the service. The OpenAPI document is generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  // Chat groups before the chat messages: /whatsapp/groups is not a message uid; under {id} the
  // member and message paths are more specific than {id} itself.
  const groupRoutes = [...groupMemberOperations, ...groupMessageOperations, ...chatGroupOperations];
  const routes = [...accountOperations, ...smsOperations, ...groupRoutes, ...whatsappOperations].map((op) => restRoute(op, deps));
  routes.push(...ingressRoutes(deps), ...operatorOperations.map((op) => restRoute(op, deps)));
  routes.push(...automationOperations.map((op) => restRoute(op, deps)));
  routes.push(
    ...[...contactCompatOperations, ...contactOperations, ...contactGroupOperations, ...campaignOperations].map((op) =>
      restRoute(op, deps),
    ),
  );
  routes.push(...[...inventoryOperations, ...noticeOperations].map((op) => restRoute(op, deps)));
  // Fixed paths under /api/v3/catalogues (orders, product sends) must be pushed before these, or
  // {catalogue} would read them as a shop id.
  routes.push(...orderOperations.map((op) => restRoute(op, deps)));
  routes.push(...productSendOperations.map((op) => restRoute(op, deps)));
  routes.push(...[...catalogueOperations, ...productOperations, ...catalogueSyncOperations].map((op) => restRoute(op, deps)));
  routes.push(...catalogueFeedOperations.map((op) => restRoute(op, deps)));
  routes.push(...[...shopLinkOperations, ...cartOperations].map((op) => restRoute(op, deps)), ...shopPageRoutes(deps));
  routes.push(...[...tableOperations, ...recordListOperations, ...recordOperations, ...groupOperations].map((op) => restRoute(op, deps)));
  return [...routes, ...docsRoutes(routes)];
}
