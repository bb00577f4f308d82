import type { AppDeps } from '../app.js';
import type { RouteDef } from '../registry.js';
import { accountRoutes } from './account.js';
import { smsRoutes } from './sms.js';
import { whatsappRoutes } from './whatsapp.js';
import { providerRoutes } from './providers.js';
import { docsRoutes } from './docs.js';
import { adminRoutes } from './admin.js';
import { automationRoutes } from './automations.js';
import { adminWebhookRoutes } from './admin-webhooks.js';
import { adminAutomationRoutes } from './admin-automations.js';
import { contactCompatRoutes, contactRestRoutes } from './contacts.js';
import { contactGroupRoutes } from './contact-groups.js';
import { campaignRoutes } from './campaigns.js';

/** Every route of the service. The OpenAPI document is generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  const routes = [...accountRoutes(deps), ...smsRoutes(deps), ...whatsappRoutes(deps), ...providerRoutes(deps), ...adminRoutes(deps)];
  routes.push(...automationRoutes(deps), ...adminWebhookRoutes(deps), ...adminAutomationRoutes(deps));
  routes.push(...contactCompatRoutes(deps), ...contactRestRoutes(deps), ...contactGroupRoutes(deps));
  routes.push(...campaignRoutes(deps));
  return [...routes, ...docsRoutes(routes)];
}
