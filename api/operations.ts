import type { AppDeps } from './http/app.js';
import type { RouteDef } from './http/registry.js';
import type { Operation } from './operation.js';
import { restRoute } from './http/rest.js';
import { docsRoutes } from './http/docs.js';
import { accountOperations } from './account/profile.js';
import { adminRoutes } from './account/settings.js';
import { smsOperations } from './messaging/sms.js';
import { whatsappOperations } from './messaging/whatsapp.js';
import { providerRoutes } from './messaging/providers.js';
import { automationOperations } from './automations/automations.js';
import { adminAutomationRoutes } from './automations/settings.js';
import { adminWebhookRoutes } from './webhooks/settings.js';
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

/** Every route of the service. The OpenAPI document is generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  const routes = [...accountOperations, ...smsOperations, ...whatsappOperations].map((op) => restRoute(op, deps));
  routes.push(...providerRoutes(deps), ...adminRoutes(deps));
  routes.push(...automationOperations.map((op) => restRoute(op, deps)), ...adminWebhookRoutes(deps), ...adminAutomationRoutes(deps));
  routes.push(
    ...[...contactCompatOperations, ...contactOperations, ...contactGroupOperations, ...campaignOperations].map((op) =>
      restRoute(op, deps),
    ),
  );
  return [...routes, ...docsRoutes(routes)];
}
