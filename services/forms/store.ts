import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import type { FormDefinition, FormSessionMode, FormSessionStatus } from '../../domain/forms/index.js';

// The forms family's statements: the only code that names forms, form_versions, form_sessions and
// form_settings. Every statement is scoped by the account; a session changes only while active, so
// a late activity retry never rewrites a session that ended.

const db = (em: EntityManager) => tablesOf(em, 'forms');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type FormRecord = Row<'forms', 'forms'>;
export type VersionRecord = Row<'forms', 'form_versions'>;
export type SessionRecord = Row<'forms', 'form_sessions'>;

// ---- Module switch -----------------------------------------------------------------------------

export async function formSettingsOf(em: EntityManager, accountId: number) {
  const row = await db(em)
    .selectFrom('form_settings')
    .select(['enabled', 'updated_at'])
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ?? { enabled: true, updated_at: null };
}

export async function saveFormSettings(em: EntityManager, accountId: number, enabled: boolean) {
  return db(em)
    .insertInto('form_settings')
    .values({ account_id: accountId, enabled, created_at: sql`now()`, updated_at: sql`now()` })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ enabled, updated_at: sql`now()` }))
    .returning(['enabled', 'updated_at'])
    .executeTakeFirstOrThrow();
}

// ---- Forms and versions ------------------------------------------------------------------------

export async function insertForm(em: EntityManager, accountId: number, uid: string, draft: FormDefinition): Promise<FormRecord> {
  return db(em)
    .insertInto('forms')
    .values({
      uid,
      account_id: accountId,
      draft: json(draft),
      latest_version: 0,
      draft_changed: true,
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function formOf(em: EntityManager, accountId: number, uid: string, lock = false): Promise<FormRecord | null> {
  let q = db(em).selectFrom('forms').selectAll().where('account_id', '=', accountId).where('uid', '=', uid);
  if (lock) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

export async function formPage(em: EntityManager, accountId: number, offset: number, limit: number) {
  const [rows, total] = await Promise.all([
    db(em).selectFrom('forms').selectAll().where('account_id', '=', accountId).orderBy('id', 'desc').offset(offset).limit(limit).execute(),
    db(em)
      .selectFrom('forms')
      .select((e) => e.fn.countAll<string>().as('n'))
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export async function saveDraft(em: EntityManager, formId: string, draft: FormDefinition): Promise<FormRecord> {
  return db(em)
    .updateTable('forms')
    .set({ draft: json(draft), draft_changed: true, updated_at: sql`now()` })
    .where('id', '=', formId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Freezes the draft as the next version (the form row is locked by the caller). */
export async function insertVersion(em: EntityManager, form: FormRecord): Promise<VersionRecord> {
  const version = form.latest_version + 1;
  const row = await db(em)
    .insertInto('form_versions')
    .values({ form_id: form.id, version, account_id: form.account_id, definition: json(form.draft), published_at: sql`now()` })
    .returningAll()
    .executeTakeFirstOrThrow();
  await db(em)
    .updateTable('forms')
    .set({ latest_version: version, draft_changed: false, updated_at: sql`now()` })
    .where('id', '=', form.id)
    .execute();
  return row;
}

export async function versionOf(
  em: EntityManager,
  form: Pick<FormRecord, 'id' | 'account_id'>,
  version: number,
): Promise<VersionRecord | null> {
  return (
    (await db(em)
      .selectFrom('form_versions')
      .selectAll()
      .where('account_id', '=', form.account_id)
      .where('form_id', '=', form.id)
      .where('version', '=', version)
      .executeTakeFirst()) ?? null
  );
}

export async function versionsOf(em: EntityManager, form: Pick<FormRecord, 'id' | 'account_id'>) {
  return db(em)
    .selectFrom('form_versions')
    .select(['version', 'published_at'])
    .where('account_id', '=', form.account_id)
    .where('form_id', '=', form.id)
    .orderBy('version')
    .execute();
}

// ---- Sessions ----------------------------------------------------------------------------------

export interface NewSession {
  uid: string;
  accountId: number;
  formId: string;
  version: number;
  recipient: string;
  senderId: string;
  conversationId: string;
  mode: FormSessionMode;
}

export async function insertSession(em: EntityManager, s: NewSession): Promise<SessionRecord> {
  return db(em)
    .insertInto('form_sessions')
    .values({
      uid: s.uid,
      account_id: s.accountId,
      form_id: s.formId,
      version: s.version,
      recipient: s.recipient,
      sender_id: s.senderId,
      conversation_id: s.conversationId,
      mode: s.mode,
      status: 'active',
      answers: json({}),
      current_question: null,
      invalid_attempts: 0,
      reminded: false,
      prompts: json([]),
      replies_seen: json([]),
      created_at: sql`now()`,
      updated_at: sql`now()`,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function sessionOf(em: EntityManager, accountId: number, uid: string, lock = false): Promise<SessionRecord | null> {
  let q = db(em).selectFrom('form_sessions').selectAll().where('account_id', '=', accountId).where('uid', '=', uid);
  if (lock) q = q.forUpdate();
  return (await q.executeTakeFirst()) ?? null;
}

/** The customer's newest active session of the account asked question by question (a chat text answers it). */
export async function activeSessionOfCustomer(em: EntityManager, accountId: number, customer: string): Promise<SessionRecord | null> {
  return (
    (await db(em)
      .selectFrom('form_sessions')
      .selectAll()
      .where('account_id', '=', accountId)
      .where('recipient', '=', customer)
      .where('status', '=', 'active')
      .where('current_question', 'is not', null)
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirst()) ?? null
  );
}

export async function sessionPage(
  em: EntityManager,
  accountId: number,
  formId: string,
  filter: { status?: FormSessionStatus; recipient?: string },
  offset: number,
  limit: number,
) {
  let base = db(em).selectFrom('form_sessions').where('account_id', '=', accountId).where('form_id', '=', formId);
  if (filter.status) base = base.where('status', '=', filter.status);
  if (filter.recipient) base = base.where('recipient', '=', filter.recipient);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').offset(offset).limit(limit).execute(),
    base.select((e) => e.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Takes back a session whose workflow could not be started (the send answers with the failure). */
export async function deleteSession(em: EntityManager, id: string) {
  await db(em).deleteFrom('form_sessions').where('id', '=', id).execute();
}

/** Changes an active session; null when it is not active any more (ended meanwhile: nothing is written). */
export async function updateActiveSession(
  em: EntityManager,
  id: string,
  set: Partial<{
    answers: Record<string, unknown>;
    current_question: string | null;
    invalid_attempts: number;
    reminded: boolean;
    prompts: string[];
    replies_seen: string[];
    status: FormSessionStatus;
    end_reason: string | null;
    submitted: boolean;
    ended: boolean;
  }>,
): Promise<SessionRecord | null> {
  const { answers, prompts, replies_seen, submitted, ended, ...rest } = set;
  return (
    (await db(em)
      .updateTable('form_sessions')
      .set({
        ...rest,
        ...(answers ? { answers: json(answers) } : {}),
        ...(prompts ? { prompts: json(prompts) } : {}),
        ...(replies_seen ? { replies_seen: json(replies_seen) } : {}),
        ...(submitted ? { submitted_at: sql`now()` } : {}),
        ...(ended ? { ended_at: sql`now()` } : {}),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst()) ?? null
  );
}

/** How a form's sessions stand and what their submitted answers add up to, per question. */
export async function answerTotals(em: EntityManager, accountId: number, formId: string, choiceKeys: string[], numberKeys: string[]) {
  const k = em.getKysely();
  const statuses = await db(em)
    .selectFrom('form_sessions')
    .select(['status', (e) => e.fn.countAll<string>().as('n')])
    .where('account_id', '=', accountId)
    .where('form_id', '=', formId)
    .groupBy('status')
    .execute();
  const answered = await sql<{ key: string; n: string }>`
    select e.key, count(*) as n
      from form_sessions s, jsonb_each(s.answers) e
     where s.account_id = ${accountId} and s.form_id = ${formId} and s.status = 'submitted' and e.value <> 'null'::jsonb
     group by e.key`.execute(k);
  const choices = choiceKeys.length
    ? await sql<{ key: string; value: string; n: string }>`
        select e.key, e.value #>> '{}' as value, count(*) as n
          from form_sessions s, jsonb_each(s.answers) e
         where s.account_id = ${accountId} and s.form_id = ${formId} and s.status = 'submitted'
           and e.key = any(${choiceKeys}::text[]) and jsonb_typeof(e.value) = 'string'
         group by 1, 2`.execute(k)
    : { rows: [] };
  const numbers = numberKeys.length
    ? await sql<{ key: string; min: string; max: string; avg: string; sum: string }>`
        select e.key, min((e.value)::numeric) as min, max((e.value)::numeric) as max, avg((e.value)::numeric) as avg, sum((e.value)::numeric) as sum
          from form_sessions s, jsonb_each(s.answers) e
         where s.account_id = ${accountId} and s.form_id = ${formId} and s.status = 'submitted'
           and e.key = any(${numberKeys}::text[]) and jsonb_typeof(e.value) = 'number'
         group by 1`.execute(k)
    : { rows: [] };
  return { statuses, answered: answered.rows, choices: choices.rows, numbers: numbers.rows };
}

/** A session with what it asks: its form's uid and the frozen definition of its version. */
export async function sessionContext(em: EntityManager, accountId: number, uid: string, lock = false) {
  const r = await sql<SessionRecord & { form_uid: string; definition: FormDefinition }>`
    select s.*, f.uid as form_uid, v.definition
      from form_sessions s
      join forms f on f.id = s.form_id and f.account_id = s.account_id
      join form_versions v on v.form_id = s.form_id and v.version = s.version
     where s.account_id = ${accountId} and s.uid = ${uid}
     ${lock ? sql`for update of s` : sql``}`.execute(em.getKysely());
  return r.rows[0] ?? null;
}

/** Notes a prompt as sent (whatever the session's status: the thanks follow the submission). */
export async function addPrompt(em: EntityManager, id: string, key: string) {
  await db(em)
    .updateTable('form_sessions')
    .set({ prompts: sql`prompts || ${JSON.stringify([key])}::jsonb`, updated_at: sql`now()` })
    .where('id', '=', id)
    .execute();
}
