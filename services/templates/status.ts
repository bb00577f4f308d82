import type { EntityManager } from '@mikro-orm/postgresql';
import { isInReview, templateStatusOf, type TemplateStatus } from '../../domain/templates/index.js';
import { emitEvent } from '../webhooks/index.js';
import { templateOfAccount, updateTemplate, type TemplateRow } from './store.js';
import { templateView } from './view.js';

/** Who told us the status: the provider's webhook, the review's poll, a refresh, a sync. */
export type StatusSource = 'webhook' | 'poll' | 'refresh' | 'sync' | 'submission';

export interface SeenStatus {
  /** The provider's status word. */
  providerStatus: string;
  reason: string | null;
}

/**
 * Applies what the provider says of a template's status, in one transaction with its
 * template.status_changed event. A status already held (a webhook and a poll telling the same, a
 * redelivered webhook) changes nothing and emits nothing: the event is deduplicated on the status,
 * the provider's word and the reason. A word we have no status for (LOCKED…) keeps ours.
 */
export async function applyTemplateStatus(
  em: EntityManager,
  accountId: number,
  templateId: string,
  seen: SeenStatus,
  source: StatusSource,
): Promise<{ row: TemplateRow; changed: boolean } | null> {
  return em.transactional(async (tx) => {
    const row = await templateOfAccount(tx, accountId, templateId, { forUpdate: true });
    if (!row) return null;
    const status: TemplateStatus = templateStatusOf(seen.providerStatus) ?? row.status;
    const providerStatus = seen.providerStatus.toUpperCase();
    const reason = status === 'approved' || status === 'pending' ? null : seen.reason;
    const checked = source === 'poll' || source === 'refresh' || source === 'sync';
    if (status === row.status && providerStatus === row.provider_status && reason === row.reason) {
      const same = checked ? await updateTemplate(tx, accountId, templateId, { checked: true }) : row;
      return { row: same ?? row, changed: false };
    }
    const updated = (await updateTemplate(tx, accountId, templateId, {
      status,
      providerStatus,
      reason,
      reviewed: !isInReview(status),
      checked,
    }))!;
    // The submission's own PENDING is no review answer: the event reports decisions (and a decision at once).
    if (source === 'submission' && isInReview(status)) return { row: updated, changed: true };
    // Flat, as every communication callback: the template's fields, what it was, and who told us.
    await emitEvent(tx, accountId, 'template.status_changed', {
      template_id: Number(updated.id),
      ...templateView(updated),
      previous_status: row.status,
      source,
    });
    return { row: updated, changed: true };
  });
}
