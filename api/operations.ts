import type { AppDeps } from './http/app.js';
import type { RouteDef } from './http/registry.js';
import type { Operation } from './operation.js';
import { restRoute } from './http/rest.js';
import { byPrecedence } from './http/precedence.js';
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
import { catalogueSettingsOperations } from './catalogues/settings.js';
import { noticeOperations, noticeSettingsOperations } from './account/notices.js';
import { shopLinkOperations } from './shop/links.js';
import { cartOperations } from './shop/carts.js';
import { cartSettingsOperations } from './shop/settings.js';
import { shopPageOperations } from './shop/page.js';
import { pageRoutes } from './http/page-door.js';
import { orderOperations } from './orders/orders.js';
import { orderSettingsOperations } from './orders/settings.js';
import { productSendOperations } from './catalogues/product-sends.js';
import { tableOperations } from './data/tables.js';
import { recordListOperations } from './data/records-list.js';
import { recordOperations } from './data/records.js';
import { groupOperations } from './data/groups.js';
import { dataSettingsOperations } from './data/settings.js';
import { chatGroupOperations } from './groups/groups.js';
import { groupMemberOperations } from './groups/members.js';
import { groupMessageOperations } from './groups/messages.js';
import { paymentOperations } from './payments/payments.js';
import { paymentSettingsOperations } from './payments/settings.js';
import { paymentReconciliationOperations } from './payments/reconciliation.js';
import { oauthSettingsOperations } from './oauth/settings.js';
import { occasionOperations, occasionSettingsOperations } from './occasions/occasions.js';
import { templateOperations } from './templates/templates.js';
import { leadOperations, leadSettingsOperations } from './leads/leads.js';
import { postOperations } from './posts/posts.js';
import { flowOperations, flowSettingsOperations } from './flows/flows.js';
import { engineOperations } from './agents/engine.js';
import { agentSettingsOperations } from './agents/settings.js';
import { formOperations, formSettingsOperations } from './forms/forms.js';

/** Every account operation of the contract (the routing order is computed from the paths: allRoutes). */
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
  ...paymentOperations,
  ...occasionOperations,
  ...templateOperations,
  ...leadOperations,
  ...postOperations,
  ...flowOperations,
  ...engineOperations,
  ...formOperations,
];

/**
 * Every operator operation ("Settings", under /admin/v1, operator token). Each is
 * also an admin CLI command: scripts/admin.ts is generated from their `cli` entries.
 */
export const operatorOperations: readonly Operation[] = [
  ...accountSettingsOperations,
  ...webhookSettingsOperations,
  ...automationSettingsOperations,
  ...noticeSettingsOperations,
  ...dataSettingsOperations,
  ...catalogueSettingsOperations,
  ...orderSettingsOperations,
  ...cartSettingsOperations,
  ...paymentSettingsOperations,
  ...paymentReconciliationOperations,
  ...oauthSettingsOperations,
  ...occasionSettingsOperations,
  ...leadSettingsOperations,
  ...flowSettingsOperations,
  ...agentSettingsOperations,
  ...formSettingsOperations,
];

/** Every page operation (public, answered in HTML by the page door): the shop page's reads and forms. */
export const pageOperations: readonly Operation[] = [...shopPageOperations];

/** Every route of the service, in the order the router tries them (computed: api/http/precedence.ts). The OpenAPI documents are generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  const routes = byPrecedence([
    ...[...customerOperations, ...operatorOperations].map((op) => restRoute(op, deps)),
    ...ingressRoutes(deps),
    ...pageRoutes(pageOperations, deps),
  ]);
  return [...routes, ...docsRoutes(routes, deps.config.rateLimitPerMinute)];
}
