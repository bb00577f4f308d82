import { ApplicationFailure } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import type { ProviderFailure, ProviderTemplate, TemplateProvider } from '../../providers/index.js';
import {
  checkTemplateComponents,
  templateStatusOf,
  TEMPLATE_CATEGORIES,
  type TemplateCategory,
  type TemplateStatus,
} from '../../domain/templates/index.js';
import {
  applyTemplateStatus,
  deleteTemplateRow,
  insertTemplate,
  templateByKey,
  templateOfAccount,
  updateTemplate,
  type TemplateRow,
} from '../../services/templates/index.js';

// The provider's side of the templates family (docs/templates.md): the submission and status reads
// of the review workflow, and the calls an API request waits for (refresh, sync, delete). Outages
// are thrown to be retried; refusals are answers (a submission's) or non-retryable ProviderRefused
// failures the waiting request answers 502 with.

export interface TemplateDeps {
  orm: MikroORM;
  log: Logger;
  templates: () => Pick<TemplateProvider, 'submit' | 'get' | 'list' | 'remove'>;
}

export type SubmitOutcome =
  | { kind: 'submitted'; providerTemplateId: string; status: TemplateStatus }
  | { kind: 'refused'; code: string; message: string }
  | { kind: 'gone' };

export type TemplateCall =
  { kind: 'refresh'; templateId: string } | { kind: 'sync'; businessAccountIds: string[] } | { kind: 'delete'; templateId: string };

export type TemplateCallOutcome =
  | { kind: 'refresh'; status: TemplateStatus | 'gone'; changed: boolean }
  | { kind: 'sync'; imported: number; updated: number; unchanged: number }
  | { kind: 'delete'; deleted: boolean };

function refused(f: { code: string; message: string }): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`${f.message}${f.code ? ` (${f.code})` : ''}`, 'ProviderRefused', {
    code: f.code,
    message: f.message,
  });
}

function transient(f: ProviderFailure, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    message: `${what}: ${f.message} (provider code ${f.code})`,
    type: 'ProviderTransient',
    nextRetryDelay: f.retryAfterSeconds ? `${f.retryAfterSeconds} seconds` : undefined,
  });
}

const categoryOf = (c: string, fallback: TemplateCategory): TemplateCategory =>
  (TEMPLATE_CATEGORIES as readonly string[]).includes(c.toUpperCase()) ? (c.toUpperCase() as TemplateCategory) : fallback;

export function createTemplateActivities(deps: TemplateDeps) {
  const em = () => deps.orm.em.fork();

  /** What the provider says of one of our templates, applied; `gone` when our row is no more. */
  const applyRead = async (row: TemplateRow, t: ProviderTemplate, source: 'poll' | 'refresh' | 'sync') => {
    const category = categoryOf(t.category, row.category);
    if (category !== row.category) await updateTemplate(em(), row.account_id, row.id, { category });
    return applyTemplateStatus(em(), row.account_id, row.id, { providerStatus: t.status, reason: t.reason }, source);
  };

  /** Reads the template at the provider and applies its status (a template the provider no longer has is deleted). */
  const readStatus = async (accountId: number, templateId: string, source: 'poll' | 'refresh') => {
    const row = await templateOfAccount(em(), accountId, templateId);
    if (!row) return { status: 'gone' as const, changed: false };
    if (!row.provider_template_id) return { status: row.status, changed: false };
    const r = await deps.templates().get(row.provider_template_id);
    if (!r.ok) {
      if (r.permanent && r.code === 'not_found') {
        const applied = await applyTemplateStatus(em(), accountId, templateId, { providerStatus: 'DELETED', reason: null }, source);
        return { status: applied?.row.status ?? ('gone' as const), changed: applied?.changed ?? false };
      }
      throw r.permanent ? refused(r) : transient(r, 'template status');
    }
    const applied = await applyRead(row, r.value, source);
    return { status: applied?.row.status ?? ('gone' as const), changed: applied?.changed ?? false };
  };

  /** The submission was refused (or could not be made): the template is removed; the refusal is the answer. */
  const withdraw = async (a: { accountId: number; templateId: string; code: string; message: string }): Promise<SubmitOutcome> => {
    await deleteTemplateRow(em(), a.accountId, a.templateId);
    deps.log.info({ accountId: a.accountId, templateId: a.templateId, code: a.code }, 'template submission refused; removed');
    return { kind: 'refused', code: a.code, message: a.message };
  };

  return {
    /**
     * Submits the template for review: the provider's id and first status are stored (a status
     * other than PENDING, as an immediate rejection, emits template.status_changed). A refusal
     * removes the template (nothing half-written) and comes back as the answer. A template already
     * submitted (a retry after the answer was stored) is not submitted twice; a duplicate the
     * provider reports (our answer was lost) is adopted.
     */
    async submitTemplate(a: { accountId: number; templateId: string }): Promise<SubmitOutcome> {
      const row = await templateOfAccount(em(), a.accountId, a.templateId);
      if (!row) return { kind: 'gone' };
      if (row.provider_template_id) return { kind: 'submitted', providerTemplateId: row.provider_template_id, status: row.status };
      const r = await deps.templates().submit(row.business_account_id, {
        name: row.name,
        language: row.language,
        category: row.category,
        components: row.components as unknown[],
      });
      let id: string;
      let providerStatus: string;
      let reason: string | null = null;
      if (r.ok) {
        id = r.value.providerTemplateId;
        providerStatus = r.value.status;
        const category = categoryOf(r.value.category, row.category);
        if (category !== row.category) await updateTemplate(em(), a.accountId, row.id, { category });
      } else if (r.permanent && r.code === 'duplicate') {
        const found = await deps.templates().list(row.business_account_id, { name: row.name });
        if (!found.ok) throw found.permanent ? refused(found) : transient(found, 'template lookup');
        const same = found.value.find((t) => t.name === row.name && t.language === row.language);
        if (!same) return withdraw({ ...a, code: r.code, message: r.message });
        id = same.providerTemplateId;
        providerStatus = same.status;
        reason = same.reason;
      } else if (r.permanent) {
        return withdraw({ ...a, code: r.code, message: r.message });
      } else throw transient(r, 'template submission');
      await updateTemplate(em(), a.accountId, row.id, { providerTemplateId: id });
      const applied = await applyTemplateStatus(em(), a.accountId, row.id, { providerStatus, reason }, 'submission');
      deps.log.info({ ...a, providerTemplateId: id, status: providerStatus }, 'template submitted');
      if (!applied) return { kind: 'gone' };
      return { kind: 'submitted', providerTemplateId: id, status: applied.row.status };
    },

    /** The submission was refused (or could not be made): the template is removed; the refusal is the answer. */
    async withdrawTemplate(a: { accountId: number; templateId: string; code: string; message: string }): Promise<SubmitOutcome> {
      return withdraw(a);
    },

    /** The review's poll: the provider's status of the template, applied. */
    async checkTemplateStatus(a: { accountId: number; templateId: string }): Promise<{ status: TemplateStatus | 'gone' }> {
      return { status: (await readStatus(a.accountId, a.templateId, 'poll')).status };
    },

    /** One awaited call of the template management. */
    async templateCall(a: { accountId: number; call: TemplateCall }): Promise<TemplateCallOutcome> {
      const { accountId, call } = a;
      if (call.kind === 'refresh') return { kind: 'refresh', ...(await readStatus(accountId, call.templateId, 'refresh')) };
      if (call.kind === 'delete') {
        const row = await templateOfAccount(em(), accountId, call.templateId);
        if (!row) return { kind: 'delete', deleted: false };
        if (row.provider_template_id) {
          const r = await deps.templates().remove(row.business_account_id, row.name, row.provider_template_id);
          // A template the provider has no more is deleted all the same.
          if (!r.ok && !(r.permanent && (r.code === 'not_found' || r.code === '100')))
            throw r.permanent ? refused(r) : transient(r, 'template delete');
        }
        await applyTemplateStatus(em(), accountId, row.id, { providerStatus: 'DELETED', reason: null }, 'refresh');
        return { kind: 'delete', deleted: await deleteTemplateRow(em(), accountId, row.id) };
      }
      // Sync: every approved template of each WABA, imported or brought up to date; ours the provider lacks are left as they are.
      let imported = 0;
      let updated = 0;
      let unchanged = 0;
      for (const waba of call.businessAccountIds) {
        const r = await deps.templates().list(waba, { status: 'APPROVED' });
        if (!r.ok) throw r.permanent ? refused(r) : transient(r, 'template list');
        for (const t of r.value) {
          if (templateStatusOf(t.status) !== 'approved') continue;
          const existing = await templateByKey(em(), accountId, waba, t.name, t.language);
          if (existing) {
            if (existing.provider_template_id !== t.providerTemplateId)
              await updateTemplate(em(), accountId, existing.id, { providerTemplateId: t.providerTemplateId });
            const applied = await applyRead(existing, t, 'sync');
            if (applied?.changed) updated++;
            else unchanged++;
            continue;
          }
          const category = categoryOf(t.category, 'UTILITY');
          const { shape } = checkTemplateComponents(category, t.components);
          const row = await insertTemplate(em(), {
            accountId,
            businessAccountId: waba,
            name: t.name,
            language: t.language,
            category,
            components: t.components,
            // A template made elsewhere that our rules would refuse still came through the provider's review: counts best effort.
            headerParams: shape?.headerParams ?? 0,
            bodyParams: shape?.bodyParams ?? 0,
            source: 'synced',
            status: 'approved',
            providerStatus: t.status.toUpperCase(),
            providerTemplateId: t.providerTemplateId,
          });
          if (row) {
            await updateTemplate(em(), accountId, row.id, { checked: true });
            imported++;
          } else unchanged++;
        }
      }
      return { kind: 'sync', imported, updated, unchanged };
    },
  };
}

export type TemplateActivities = ReturnType<typeof createTemplateActivities>;
