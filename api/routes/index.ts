import type { AppDeps } from '../app.js';
import type { RouteDef } from '../registry.js';
import { accountRoutes } from './account.js';
import { smsRoutes } from './sms.js';
import { whatsappRoutes } from './whatsapp.js';
import { providerRoutes } from './providers.js';
import { docsRoutes } from './docs.js';
import { adminRoutes } from './admin.js';

/** Every route of the service. The OpenAPI document is generated from this same list. */
export function allRoutes(deps: AppDeps): RouteDef[] {
  const routes = [...accountRoutes(deps), ...smsRoutes(deps), ...whatsappRoutes(deps), ...providerRoutes(deps), ...adminRoutes(deps)];
  return [...routes, ...docsRoutes(routes)];
}
