// How a lead's person is named. A lead holds identities (a phone number in E.164, an e-mail address,
// a chat id, a conversation, a call), each unique in the account: the upsert finds the person by
// any of them (docs/leads.md, "Finding the person"). Phone numbers are parsed by the service (a
// package does it); the rest is plain text handled here.

export const IDENTITY_KINDS = ['phone', 'email', 'chat_id', 'conversation', 'call'] as const;
export type IdentityKind = (typeof IDENTITY_KINDS)[number];

/**
 * Which identity wins when a request's identities name different leads: the e-mail first (what a
 * HubSpot user expects: e-mail is its contacts' unique key), then the phone, the chat id, and the
 * records the lead was met through.
 */
export const IDENTITY_PRECEDENCE: readonly IdentityKind[] = ['email', 'phone', 'chat_id', 'conversation', 'call'];

// A type, not an interface: answers hold it where a schema's object (an index signature) is expected.
export type Identity = { kind: IdentityKind; value: string };

// One address as a person writes it: a local part and a domain with a dot, no spaces (RFC 5321 sizes).
const EMAIL =
  /^[^\s@"<>(),;:\\[\]]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)+$/;

/**
 * An e-mail address as it is matched: trimmed and lower case (the whole address, as HubSpot does;
 * Gmail dots and plus tags are kept, since they can be different mailboxes elsewhere). Null when it
 * is not an address.
 */
export function normalEmail(raw: string): string | null {
  const e = raw.trim().toLowerCase();
  return e.length <= 254 && EMAIL.test(e) ? e : null;
}

/** A chat id (a WhatsApp id, a Messenger PSID…) as matched: trimmed; a leading + is dropped (wa_id has none). Null when empty. */
export function normalChatId(raw: string): string | null {
  const c = raw.trim().replace(/^\+/, '');
  return c === '' || c.length > 191 ? null : c;
}

/**
 * The customer of a conversation id, `<channel>:<sender>:<customer>` (whatsapp:<phone number id>:<E.164>),
 * the form the inbox and the shop name conversations with. Null when it names no customer.
 */
export function conversationCustomer(conversationId: string): string | null {
  const parts = conversationId.split(':');
  if (parts.length < 3) return null;
  const customer = parts.slice(2).join(':').trim();
  return customer === '' ? null : customer;
}

/** A label as stored: trimmed, inner runs of spaces made one; compared without case. */
export const normalLabel = (raw: string) => raw.trim().replace(/\s+/g, ' ');
export const sameLabel = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/** Whom a lead is visible to without leads.data.all: its assignee, whoever added it, and everyone while it is unassigned. */
export function leadVisibleTo(lead: { assignee_id: number | null; added_by: number | null }, userId: number): boolean {
  return lead.assignee_id === null || lead.assignee_id === userId || lead.added_by === userId;
}
