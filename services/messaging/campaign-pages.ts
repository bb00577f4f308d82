import type { EntityManager } from '@mikro-orm/postgresql';
import { newUid } from '../platform/ids.js';
import { countMessageStatuses } from '../../observability/metrics.js';
import { insertCampaignRecords } from './store/messages.js';

// A campaign page's records, written for the batch dispatcher: nothing here sends. Records written
// with dispatch_mode 'batch' and status queued are claimed and sent exactly once by the outbound
// dispatcher workflow.

/** One message to write for one contact: queued, or failed at once (an unusable number). */
export interface RecipientDraft {
  contactId: number;
  recipient: string;
  body: string;
  segments: number;
  encoding: string;
  failure: string | null;
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
 * Writes the drafts as SMS records for the batch dispatcher in one statement, in the caller's
 * transaction. A (campaign, contact) pair already written is left alone, so repeating a page adds
 * nothing. Returns what was actually inserted, and the segments of the queued records (to debit).
 */
export async function queueCampaignPage(
  em: EntityManager,
  src: BulkSource,
  drafts: RecipientDraft[],
): Promise<{ inserted: number; queuedSegments: number }> {
  if (drafts.length === 0) return { inserted: 0, queuedSegments: 0 };
  const rows = await insertCampaignRecords(em, {
    accountId: src.accountId,
    campaignId: src.campaignId,
    channelId: src.channelId,
    channelCode: src.channelCode,
    sender: src.sender,
    metadata: src.metadata ?? { source: 'campaign' },
    records: JSON.stringify(
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
  });
  countMessageStatuses(rows);
  return { inserted: rows.length, queuedSegments: rows.filter((r) => r.status === 'queued').reduce((n, r) => n + Number(r.segments), 0) };
}
