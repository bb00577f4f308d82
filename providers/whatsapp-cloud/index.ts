// The WhatsApp Cloud API adapter: everything about this provider, behind ChatProvider.
import type { ChatGroupProvider, ChatProvider, TemplateProvider, WebhookRequest } from '../types.js';
import { WhatsAppCloudClient, type WhatsAppCloudOptions } from './client.js';
import { buildCloudApiPayload, readCloudApiRequest, type CloudApiRequest } from './payload.js';
import { verifyMetaSignature } from './signature.js';
import { mapWhatsAppStatus } from './status.js';
import { WHATSAPP_WEBHOOK_PATH, parseWhatsAppGroupWebhook, parseWhatsAppWebhook, whatsAppHandshake } from './webhook.js';
import { WhatsAppGroupsClient, groupMessagePayload } from './groups.js';
import { WhatsAppTemplatesClient, parseTemplateWebhook } from './templates.js';

export interface WhatsAppCloudSettings extends WhatsAppCloudOptions {
  /** Key of X-Hub-Signature-256. */
  appSecret: string;
  /** What Meta must present in hub.verify_token when it subscribes the webhook. */
  verifyToken: string;
}

export function createWhatsAppCloud(o: WhatsAppCloudSettings): ChatProvider {
  const client = new WhatsAppCloudClient(o);
  const header = (req: WebhookRequest) => {
    const v = req.headers['x-hub-signature-256'];
    return typeof v === 'string' ? v : undefined;
  };
  return {
    key: 'whatsapp-cloud',
    kind: 'chat',
    channelType: 'whatsapp',
    // Statuses name only the wamid, and Meta may post `sent` before the send's answer is stored.
    statusesMayPrecedeSend: true,
    mapStatus: mapWhatsAppStatus,
    verifySignature: (req) => verifyMetaSignature(o.appSecret, req.rawBody, header(req)),
    buildPayload: (from, to, message, replyTo): CloudApiRequest => ({
      phone_number_id: from.providerPhoneNumberId,
      body: buildCloudApiPayload(message, to, replyTo),
    }),
    async send(request, idempotencyKey) {
      const r = readCloudApiRequest(request);
      if (!r) return { ok: false, permanent: true, code: 'invalid_request', message: 'The stored WhatsApp request is malformed.' };
      return client.send(r.phone_number_id, r.body, idempotencyKey);
    },
    webhooks: [
      {
        method: 'GET',
        path: WHATSAPP_WEBHOOK_PATH,
        summary: 'WhatsApp webhook verification (hub.challenge)',
        query: {
          type: 'object',
          properties: { 'hub.mode': { type: 'string' }, 'hub.verify_token': { type: 'string' }, 'hub.challenge': { type: 'string' } },
        },
        answer: { status: 200, contentType: 'text/plain', description: 'The challenge echoed', schema: { type: 'string' } },
        handshake: (req) => whatsAppHandshake(req, o.verifyToken),
      },
      {
        method: 'POST',
        path: WHATSAPP_WEBHOOK_PATH,
        summary: 'WhatsApp Cloud API webhook: statuses and inbound messages (X-Hub-Signature-256)',
        answer: {
          status: 200,
          contentType: 'application/json',
          body: '{"ok":true}',
          description: 'Processed',
          schema: { type: 'object' },
        },
        parse: parseWhatsAppWebhook,
      },
    ],
  };
}

/**
 * The Groups API behind ChatGroupProvider: calls (./groups.ts) and the group side of the webhook
 * (./webhook.ts). A group message is sent by the chat adapter above like any message, so its request
 * has the same {phone_number_id, body} shape.
 */
export function createWhatsAppCloudGroups(o: WhatsAppCloudOptions): ChatGroupProvider {
  const client = new WhatsAppGroupsClient(o);
  return {
    key: 'whatsapp-cloud',
    createGroup: (phoneNumberId, input) => client.createGroup(phoneNumberId, input),
    updateGroup: (groupId, change) => client.updateGroup(groupId, change),
    deleteGroup: (groupId) => client.deleteGroup(groupId),
    resetInviteLink: (groupId) => client.resetInviteLink(groupId),
    approveJoinRequests: (groupId, ids) => client.approveJoinRequests(groupId, ids),
    rejectJoinRequests: (groupId, ids) => client.rejectJoinRequests(groupId, ids),
    removeParticipants: (groupId, users) => client.removeParticipants(groupId, users),
    pin: (phoneNumberId, groupId, p, idempotencyKey) => client.pin(phoneNumberId, groupId, p, idempotencyKey),
    messageRequest: (from, groupId, content): CloudApiRequest => ({
      phone_number_id: from.providerPhoneNumberId,
      body: groupMessagePayload(groupId, content),
    }),
    // Cheap test before a second parse: the busiest webhooks (statuses) never mention a group.
    parseWebhook: (req) => (req.rawBody.includes(MENTIONS_GROUP) ? parseWhatsAppGroupWebhook(req) : []),
  };
}

const MENTIONS_GROUP = Buffer.from('group');

/** Template management (./templates.ts) and the template side of the WABA's webhook. */
export function createWhatsAppCloudTemplates(o: WhatsAppCloudOptions): TemplateProvider {
  const client = new WhatsAppTemplatesClient(o);
  return {
    key: 'whatsapp-cloud',
    submit: (waba, t) => client.submit(waba, t),
    get: (id) => client.get(id),
    list: (waba, filter) => client.list(waba, filter),
    remove: (waba, name, id) => client.remove(waba, name, id),
    parseWebhook: parseTemplateWebhook,
  };
}

export {
  WhatsAppGroupsClient,
  groupInviteComponents,
  groupMessagePayload,
  groupPinPayload,
  type GroupInfo,
  type GroupJoinRequest,
  type GroupSummary,
  type Page,
} from './groups.js';
export { parseWhatsAppGroupWebhook, type WhatsAppGroupEvent } from './webhook.js';
