import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import type { TemplateCategory, TemplateSource, TemplateStatus } from '../../domain/templates/index.js';

// The templates family's statements: the only code that names message_templates. Every read and
// write of a customer's template is scoped by its account; the webhook's lookup by the provider's
// id names the WABA the notification came for as well.

const db = (em: EntityManager) => tablesOf(em, 'templates');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type TemplateRow = Row<'templates', 'message_templates'>;

export interface NewTemplate {
  accountId: number;
  businessAccountId: string;
  name: string;
  language: string;
  category: TemplateCategory;
  components: readonly unknown[];
  headerParams: number;
  bodyParams: number;
  source: TemplateSource;
  status?: TemplateStatus;
  providerStatus?: string | null;
  providerTemplateId?: string | null;
  reason?: string | null;
  deployedFrom?: string | null;
}

/** Inserts the template; null when the account already has that name in that language on that WABA. */
export async function insertTemplate(em: EntityManager, t: NewTemplate): Promise<TemplateRow | null> {
  const row = await db(em)
    .insertInto('message_templates')
    .values({
      account_id: t.accountId,
      business_account_id: t.businessAccountId,
      name: t.name,
      language: t.language,
      category: t.category,
      components: json(t.components as unknown[]),
      header_params: t.headerParams,
      body_params: t.bodyParams,
      source: t.source,
      status: t.status ?? 'submitting',
      provider_status: t.providerStatus ?? null,
      provider_template_id: t.providerTemplateId ?? null,
      reason: t.reason ?? null,
      deployed_from: t.deployedFrom ?? null,
      reviewed_at: t.status && t.status !== 'submitting' && t.status !== 'pending' ? sql`now()` : null,
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .onConflict((oc) => oc.columns(['account_id', 'business_account_id', 'name', 'language']).doNothing())
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** The account's template by id (another account's is null), locked for the transaction when asked. */
export async function templateOfAccount(
  em: EntityManager,
  accountId: number,
  id: string | number,
  opts: { forUpdate?: boolean } = {},
): Promise<TemplateRow | null> {
  let q = db(em).selectFrom('message_templates').selectAll().where('account_id', '=', accountId).where('id', '=', String(id));
  if (opts.forUpdate) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

/** The account's template of that name and language on that WABA. */
export async function templateByKey(em: EntityManager, accountId: number, waba: string, name: string, language: string) {
  return (
    (await db(em)
      .selectFrom('message_templates')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('business_account_id', '=', waba)
      .where('name', '=', name)
      .where('language', '=', language)
      .executeTakeFirst()) ?? null
  );
}

/** The templates a send may name: that name and language on the sender's WABA (any of the account's when the number names none). */
export async function templatesForSend(em: EntityManager, accountId: number, waba: string | null, name: string, language: string) {
  let q = db(em)
    .selectFrom('message_templates')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .where('language', '=', language);
  if (waba !== null) q = q.where('business_account_id', '=', waba);
  return q.orderBy('id').execute();
}

export interface TemplateFilter {
  status?: TemplateStatus;
  name?: string;
  language?: string;
  businessAccountId?: string;
  category?: TemplateCategory;
}

/** A page of the account's templates, newest first. */
export async function templatesPage(
  em: EntityManager,
  accountId: number,
  f: TemplateFilter,
  page: { limit: number; offset: number },
): Promise<{ total: number; rows: TemplateRow[] }> {
  let q = db(em).selectFrom('message_templates').where('account_id', '=', accountId);
  if (f.status) q = q.where('status', '=', f.status);
  if (f.name) q = q.where('name', '=', f.name);
  if (f.language) q = q.where('language', '=', f.language);
  if (f.businessAccountId) q = q.where('business_account_id', '=', f.businessAccountId);
  if (f.category) q = q.where('category', '=', f.category);
  const count = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await q.selectAll().orderBy('id', 'desc').limit(page.limit).offset(page.offset).execute();
  return { total: Number(count.n), rows };
}

/** The templates a provider status update names: its id on the WABA the notification came for (one per account that holds it). */
export async function templatesOfProviderId(em: EntityManager, waba: string, providerTemplateId: string) {
  return db(em)
    .selectFrom('message_templates')
    .select(['id', 'account_id'])
    .where('business_account_id', '=', waba)
    .where('provider_template_id', '=', providerTemplateId)
    .execute();
}

export interface TemplateChange {
  status?: TemplateStatus;
  providerStatus?: string | null;
  reason?: string | null;
  providerTemplateId?: string;
  category?: TemplateCategory;
  components?: readonly unknown[];
  headerParams?: number;
  bodyParams?: number;
  reviewed?: boolean;
  checked?: boolean;
}

/** Writes the change to the account's template; the row as it is now, null when it is gone. */
export async function updateTemplate(em: EntityManager, accountId: number, id: string, c: TemplateChange): Promise<TemplateRow | null> {
  const row = await db(em)
    .updateTable('message_templates')
    .set({
      ...(c.status !== undefined ? { status: c.status } : {}),
      ...(c.providerStatus !== undefined ? { provider_status: c.providerStatus } : {}),
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
      ...(c.providerTemplateId !== undefined ? { provider_template_id: c.providerTemplateId } : {}),
      ...(c.category !== undefined ? { category: c.category } : {}),
      ...(c.components !== undefined ? { components: json(c.components as unknown[]) } : {}),
      ...(c.headerParams !== undefined ? { header_params: c.headerParams } : {}),
      ...(c.bodyParams !== undefined ? { body_params: c.bodyParams } : {}),
      ...(c.reviewed ? { reviewed_at: sql`now()` } : {}),
      ...(c.checked ? { last_checked_at: sql`now()` } : {}),
      updated_at: sql`now()`,
    })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row ?? null;
}

/** Removes the account's template; true when there was one. */
export async function deleteTemplateRow(em: EntityManager, accountId: number, id: string): Promise<boolean> {
  const r = await db(em).deleteFrom('message_templates').where('account_id', '=', accountId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
