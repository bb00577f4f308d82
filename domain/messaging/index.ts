// The messaging family's pure rules as other families see them.
export { mergeRecipients } from './recipients.js';
export { estimateSegments } from './segments.js';
export { SCHEDULE_TIME_PATTERN, scheduleTimeSchema } from './schedule-time.js';
export {
  prepareWhatsAppMessage,
  WHATSAPP_LIMITS,
  WHATSAPP_MEDIA_KINDS,
  type PreparedWhatsAppMessage,
  type WhatsAppSendInput,
} from './whatsapp-message.js';
