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
];

/**
 * Every operator operation ("Settings", under /admin/v1, operator token), in routing order. Each is
 * also an admin CLI command: scripts/admin.ts is generated from their `cli` entries.
 */
export const operatorOperations: readonly Operation[] = [
  ...accountSettingsOperations,
  ...webhookSettingsOperations,
  ...automationSettingsOperations,
];

/** Every route of the service. The OpenAPI document is generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  const routes = [...accountOperations, ...smsOperations, ...whatsappOperations].map((op) => restRoute(op, deps));
  routes.push(...ingressRoutes(deps), ...operatorOperations.map((op) => restRoute(op, deps)));
  routes.push(...automationOperations.map((op) => restRoute(op, deps)));
  routes.push(
    ...[...contactCompatOperations, ...contactOperations, ...contactGroupOperations, ...campaignOperations].map((op) =>
      restRoute(op, deps),
    ),
  );
  return [...routes, ...docsRoutes(routes)];
}
