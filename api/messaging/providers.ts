import type { AppDeps } from '../http/app.js';
import { HttpError } from '../http/errors.js';
import { emptyQuery, type RouteDef } from '../http/registry.js';
import { verifyTwilioSignature } from '../../activities/providers/sms-gateway/client.js';
import { verifyMetaSignature } from '../../activities/providers/whatsapp-cloud/client.js';
import { receiveSmsStatus } from './receipt-ingress.js';
import { applyWhatsAppStatus, receiveInbound } from '../../services/messaging/inbound.js';

// Provider ingress: receipts and inbound messages posted by the providers (the simulator in dev).
// Every request is checked against the provider's own signature scheme before anything is read.
export function providerRoutes(deps: AppDeps): RouteDef[] {
  const formParams = (raw: Buffer) => Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
  const checkTwilio = (ctx: any, params: Record<string, string>) => {
    const url = `${deps.config.publicBaseUrl}${ctx.originalUrl}`;
    if (!verifyTwilioSignature(deps.config.smsGatewayAuthToken, url, params, ctx.get('x-twilio-signature') || undefined)) {
      throw new HttpError(403, 'Invalid provider signature.');
    }
  };
  const base = { tag: 'Provider ingress', auth: 'provider' as const, query: emptyQuery, rawBody: true };
  return [
    {
      ...base,
      method: 'POST',
      path: '/providers/sms/status',
      summary: 'SMS gateway delivery receipt (Twilio-style, X-Twilio-Signature)',
      response: { status: 204, description: 'Receipt applied', schema: { type: 'null' } },
      // Served by api/receipt-ingress.ts ahead of Koa in the running server; this definition documents
      // it and answers the same way wherever the Koa app is used on its own.
      handler: async ({ ctx }) => {
        await receiveSmsStatus(deps, ctx.originalUrl, ctx.state.rawBody, ctx.get('x-twilio-signature') || undefined);
        return { status: 204, body: null };
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/providers/sms/inbound',
      summary: 'Inbound SMS (Twilio-style, X-Twilio-Signature)',
      response: { status: 200, description: 'Stored (empty TwiML answer)', schema: { type: 'string' } },
      handler: async ({ ctx }) => {
        const p = formParams(ctx.state.rawBody);
        checkTwilio(ctx, p);
        await receiveInbound(deps, {
          channelType: 'sms',
          businessNumber: { number: p.To ?? '' },
          from: p.From ?? '',
          body: p.Body ?? '',
          providerMessageId: p.MessageSid ?? p.SmsSid ?? '',
          mediaUrl: p.MediaUrl0 ?? null,
          mediaType: p.MediaContentType0 ?? null,
        });
        ctx.type = 'text/xml';
        return { status: 200, body: '<?xml version="1.0" encoding="UTF-8"?><Response></Response>' };
      },
    },
    {
      method: 'GET',
      path: '/providers/whatsapp/webhook',
      tag: 'Provider ingress',
      auth: 'provider',
      summary: 'WhatsApp webhook verification (hub.challenge)',
      query: {
        type: 'object',
        properties: { 'hub.mode': { type: 'string' }, 'hub.verify_token': { type: 'string' }, 'hub.challenge': { type: 'string' } },
      },
      response: { status: 200, description: 'The challenge echoed', schema: { type: 'string' } },
      handler: async ({ query, ctx }) => {
        if (query['hub.mode'] !== 'subscribe' || query['hub.verify_token'] !== deps.config.whatsappVerifyToken)
          throw new HttpError(403, 'Verification failed.');
        ctx.type = 'text/plain';
        return { body: String(query['hub.challenge'] ?? '') };
      },
    },
    {
      ...base,
      method: 'POST',
      path: '/providers/whatsapp/webhook',
      summary: 'WhatsApp Cloud API webhook: statuses and inbound messages (X-Hub-Signature-256)',
      response: { status: 200, description: 'Processed', schema: { type: 'object' } },
      handler: async ({ ctx }) => {
        const raw = ctx.state.rawBody as Buffer;
        if (!verifyMetaSignature(deps.config.whatsappAppSecret, raw, ctx.get('x-hub-signature-256') || undefined))
          throw new HttpError(403, 'Invalid provider signature.');
        let payload: any;
        try {
          payload = JSON.parse(raw.toString('utf8'));
        } catch {
          throw new HttpError(400, 'The request body is not valid JSON.');
        }
        for (const entry of payload?.entry ?? []) {
          for (const change of entry?.changes ?? []) {
            const value = change?.value ?? {};
            for (const s of value.statuses ?? []) await applyWhatsAppStatus(deps, s);
            for (const m of value.messages ?? []) {
              const content = m[m.type] ?? {};
              await receiveInbound(deps, {
                channelType: 'whatsapp',
                businessNumber: { phoneNumberId: value.metadata?.phone_number_id },
                from: m.from ?? '',
                body: m.text?.body ?? content.caption ?? content.body ?? `[${m.type}]`,
                providerMessageId: m.id ?? '',
                mediaUrl: content.link ?? null,
                mediaType: ['image', 'video', 'audio', 'document', 'sticker'].includes(m.type) ? m.type : null,
                metadata: {
                  type: m.type,
                  ...(m.context?.id ? { in_reply_to: m.context.id } : {}),
                  ...(m.type === 'reaction' ? { reaction: m.reaction } : {}),
                  ...(m.type === 'interactive' ? { interactive: m.interactive } : {}),
                },
              });
            }
          }
        }
        return { body: { ok: true } };
      },
    },
  ];
}
