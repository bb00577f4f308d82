import type { EntityManager } from '@mikro-orm/postgresql';
import { personalize } from '../../domain/campaigns/personalize.js';
import { estimateSegments } from '../../domain/messaging/index.js';
import { parseRecipient } from '../platform/phones.js';
import { accountAudiencePage, audiencePage, type AudienceRow } from '../contacts/index.js';
import { blockedNumbers, queueCampaignPage, type BulkSource, type RecipientDraft } from '../messaging/index.js';

// The parts of a bulk SMS that any process can reuse (campaigns today, occasion greetings next):
// read an audience page, personalize it, write one message record per recipient for the batch
// dispatcher, debit the wallet. Each takes the transaction's EntityManager, so a caller commits a
// page as one unit. Nothing here sends: rows written with dispatch_mode 'batch' and status queued
// are claimed and sent exactly once by the outbound dispatcher workflow.

/** A contact of the audience, and whether the blacklist blocks its number on the campaign's route. */
export type AudienceContact = AudienceRow & { blocked: boolean };

/**
 * Whom a campaign without a group reads (stored on the campaign, `audience`): the account's
 * contacts that opted in, of the groups named (all when null), each number once; for a contact date,
 * those whose `field` holds one of `month_days` (an occasion's day; docs/occasions.md).
 */
export type CampaignAudience =
  | { kind: 'contact_date'; field: string; month_days: string[]; contact_group_ids: number[] | null }
  | { kind: 'subscribed'; contact_group_ids: number[] | null };

/** Who a campaign page reads: one group (POST /sms/campaign), or an audience of the account. */
export type AudienceSource = { groupId: number } | { audience: CampaignAudience };

/**
 * One keyset page of a campaign's audience (contacts with id > afterId, by id). `blocked` is true
 * for numbers on the account's blacklist for every route (channel_id null) or for `channelId`.
 * For a group, is_subscribed is deliberately not applied (the contract: a stored flag only).
 */
export async function readAudiencePage(
  em: EntityManager,
  q: { accountId: number; channelId: number | null; afterId: number; limit: number } & AudienceSource,
): Promise<AudienceContact[]> {
  const page =
    'groupId' in q
      ? await audiencePage(em, q)
      : await accountAudiencePage(em, {
          accountId: q.accountId,
          afterId: q.afterId,
          limit: q.limit,
          audience: {
            groupIds: q.audience.contact_group_ids,
            dateField: q.audience.kind === 'contact_date' ? q.audience.field : null,
            monthDays: q.audience.kind === 'contact_date' ? q.audience.month_days : null,
          },
        });
  const blocked = await blockedNumbers(
    em,
    q.accountId,
    q.channelId,
    page.map((c) => c.full_phone_number),
  );
  return page.map((c) => ({ ...c, blocked: c.full_phone_number !== '' && blocked.has(c.full_phone_number) }));
}

export type { RecipientDraft, BulkSource };

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

/**
 * Writes the drafts as SMS records for the batch dispatcher (messaging's statement). A (campaign,
 * contact) pair already written is left alone, so repeating a page adds nothing. Returns what was
 * actually inserted.
 */
export const insertRecipientMessages = (em: EntityManager, src: BulkSource, drafts: RecipientDraft[]) => queueCampaignPage(em, src, drafts);

// The wallet rule is the account family's; campaigns debit through it as the sends do.
export { debitSegments } from '../account/index.js';
