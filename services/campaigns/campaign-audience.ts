import type { EntityManager } from '@mikro-orm/postgresql';
import { many, manyBound } from '../../entities/db.js';
import { personalize } from '../../domain/campaigns/personalize.js';
import { estimateSegments } from '../../domain/messaging/index.js';
import { parseRecipient } from '../platform/phones.js';
import { newUid } from '../platform/ids.js';
import { countMessageStatuses } from '../../observability/metrics.js';

// The parts of a bulk SMS that any process can reuse (campaigns today, occasion greetings next):
// read an audience page, personalize it, write one message record per recipient for the batch
// dispatcher, debit the wallet. Each takes the transaction's EntityManager, so a caller commits a
// page as one unit. Nothing here sends: rows written with dispatch_mode 'batch' and status queued
// are claimed and sent exactly once by the outbound dispatcher workflow.

export interface AudienceContact {
  id: number;
  name: string;
  country_code: string;
  phone_number: string;
  full_phone_number: string;
  custom_field_values: Record<string, unknown> | null;
  blocked: boolean;
}

/**
 * One keyset page of a group's audience (contacts with id > afterId, by id). `blocked` is true for
 * numbers on the account's blacklist for every route (channel_id null) or for `channelId`.
 * is_subscribed is deliberately not applied (the contract: a stored flag only).
 */
export async function readAudiencePage(
  em: EntityManager,
  q: { accountId: number; groupId: number; channelId: number | null; afterId: number; limit: number },
): Promise<AudienceContact[]> {
  const rows = await many<AudienceContact & { id: string }>(
    em,
    `select c.id, c.name, c.country_code, c.phone_number, c.full_phone_number, c.custom_field_values,
            exists (select 1 from blacklist b
                     where b.account_id = ? and (b.channel_id is null or b.channel_id = ?)
                       and c.full_phone_number <> '' and regexp_replace(b.phone, '[^0-9]', '', 'g') = c.full_phone_number) as blocked
       from contacts c
      where c.group_id = ? and c.account_id = ? and c.id > ?
      order by c.id limit ?`,
    [q.accountId, q.channelId, q.groupId, q.accountId, q.afterId, q.limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/** One message to write for one contact: queued, or failed at once (an unusable number). */
export interface RecipientDraft {
  contactId: number;
  recipient: string;
  body: string;
  segments: number;
  encoding: string;
  failure: string | null;
}

/** Personalizes the template per contact; skips contacts without a phone and blacklisted numbers. */
export function draftRecipients(template: string, contacts: AudienceContact[]): { drafts: RecipientDraft[]; skipped: number } {
  const drafts: RecipientDraft[] = [];
  let skipped = 0;
  for (const c of contacts) {
    const digits = (c.full_phone_number ?? '').replace(/\D/g, '');
    if (digits === '' || (c.phone_number ?? '').replace(/\D/g, '') === '' || c.blocked) {
      skipped++;
      continue;
    }
    const body = personalize(template, {
      name: c.name,
      countryCode: c.country_code,
      phoneNumber: c.phone_number,
      fullPhoneNumber: digits,
      customFieldValues: c.custom_field_values,
    });
    const seg = estimateSegments(body);
    const number = parseRecipient(digits);
    drafts.push({
      contactId: c.id,
      recipient: 'e164' in number ? number.e164 : digits,
      body,
      segments: seg.segments,
      encoding: seg.encoding,
      failure: 'e164' in number ? null : number.problem,
    });
  }
  return { drafts, skipped };
}

export interface BulkSource {
  accountId: number;
  campaignId: number;
  channelId: number | null;
  channelCode: string | null;
  sender: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * Writes the drafts as SMS records for the batch dispatcher in one statement. A (campaign, contact)
 * pair already written is left alone (ON CONFLICT DO NOTHING), so repeating a page adds nothing.
 * Returns what was actually inserted.
 */
export async function insertRecipientMessages(
  em: EntityManager,
  src: BulkSource,
  drafts: RecipientDraft[],
): Promise<{ inserted: number; queuedSegments: number }> {
  if (drafts.length === 0) return { inserted: 0, queuedSegments: 0 };
  const rows = await manyBound<{ status: string; segments: number }>(
    em,
    `insert into messages (uid, account_id, direction, channel_type, channel_id, channel_code, sender, recipient, body, status, error_message,
                           metadata, segments, encoding, campaign_id, contact_id, dispatch_mode, created_at, updated_at)
     select v.uid, ?::int, 'outbound', 'sms', ?::int, ?::text, ?::text, v.recipient, v.body, v.status, v.error_message,
            ?::jsonb, v.segments, v.encoding, ?::int, v.contact_id, 'batch', now(), now()
       from jsonb_to_recordset(?::jsonb) as v(ord int, uid text, recipient text, body text, status text, error_message text, segments int, encoding text, contact_id bigint)
      order by v.ord
     on conflict (campaign_id, contact_id) do nothing
     returning status, segments`,
    [
      src.accountId,
      src.channelId,
      src.channelCode,
      src.sender,
      JSON.stringify(src.metadata ?? { source: 'campaign' }),
      src.campaignId,
      JSON.stringify(
        drafts.map((d, ord) => ({
          ord,
          uid: newUid('msg'),
          recipient: d.recipient,
          body: d.body,
          status: d.failure ? 'failed' : 'queued',
          error_message: d.failure,
          segments: d.segments,
          encoding: d.encoding,
          contact_id: d.contactId,
        })),
      ),
    ],
  );
  countMessageStatuses(rows);
  return { inserted: rows.length, queuedSegments: rows.filter((r) => r.status === 'queued').reduce((n, r) => n + Number(r.segments), 0) };
}

// The wallet rule is the account family's; campaigns debit through it as the sends do.
export { debitSegments } from '../account/index.js';
