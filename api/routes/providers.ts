import type { AppDeps } from '../app.js';
import { HttpError } from '../errors.js';
import { emptyQuery, type RouteDef } from '../registry.js';
import { verifyTwilioSignature } from '../../activities/providers/sms-gateway.js';
import { applySmsReceipt } from '../../services/receipts.js';

// Provider ingress: receipts and inbound messages posted by the providers (the simulator in dev).
// Every request is checked against the provider's own signature scheme before anything is read.
export function providerRoutes(deps: AppDeps): RouteDef[] {
  return [
    {
      method: 'POST', path: '/providers/sms/status', tag: 'Provider ingress', summary: 'SMS gateway delivery receipt (Twilio-style, X-Twilio-Signature)',
      auth: 'provider', query: emptyQuery, rawBody: true,
      response: { status: 204, description: 'Receipt applied', schema: { type: 'null' } },
      handler: async ({ ctx }) => {
        const params = Object.fromEntries(new URLSearchParams((ctx.state.rawBody as Buffer).toString('utf8')));
        const url = `${deps.config.publicBaseUrl}${ctx.originalUrl}`;
        if (!verifyTwilioSignature(deps.config.smsGatewayAuthToken, url, params, ctx.get('x-twilio-signature') || undefined)) {
          throw new HttpError(403, 'Invalid provider signature.');
        }
        await applySmsReceipt(deps, String(ctx.query.m ?? ''), params);
        return { status: 204, body: null };
      },
    },
  ];
}
