import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../../entities/db.js';
import type { Row } from '../../../entities/database.js';

// Contacts live inside a group: every statement is scoped by account and group.

type ContactRecord = Row<'contacts', 'contacts'>;

/** A contact as its view shows it (the group's uid is added by the caller). */
export type ContactRow = Pick<
  ContactRecord,
  | 'id'
  | 'uid'
  | 'group_id'
  | 'name'
  | 'country_code'
  | 'phone_number'
  | 'full_phone_number'
  | 'is_subscribed'
  | 'custom_field_values'
  | 'created_at'
  | 'updated_at'
>;

const COLUMNS =
  'c.id, c.uid, c.group_id, c.name, c.country_code, c.phone_number, c.full_phone_number, c.is_subscribed, c.custom_field_values, c.created_at, c.updated_at';

/** How a request names a contact: its numeric id or its uid. */
export type ContactRef = { id: number } | { uid: string };
const refSql = (ref: ContactRef) => ('id' in ref ? { sql: 'c.id = ?', param: ref.id } : { sql: 'c.uid = ?', param: ref.uid });

/** A contact's fields as a write gives them. */
export interface ContactValues {
  name: string;
  countryCode: string;
  phoneNumber: string;
  fullPhoneNumber: string;
  /** null keeps the stored value on an update (true on an insert). */
  isSubscribed: boolean | null;
  customFieldValues: Record<string, unknown>;
}

export async function insertContact(em: EntityManager, uid: string, accountId: number, groupId: number, c: ContactValues) {
  return (await one<ContactRow>(
    em,
    `insert into contacts as c (uid, account_id, group_id, name, country_code, phone_number, full_phone_number, is_subscribed, custom_field_values, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, now(), now()) returning ${COLUMNS}`,
    [
      uid,
      accountId,
      groupId,
      c.name,
      c.countryCode,
      c.phoneNumber,
      c.fullPhoneNumber,
      c.isSubscribed ?? true,
      JSON.stringify(c.customFieldValues),
    ],
  ))!;
}

export const groupContact = (em: EntityManager, accountId: number, groupId: number, ref: ContactRef) => {
  const r = refSql(ref);
  return one<ContactRow>(em, `select ${COLUMNS} from contacts c where c.account_id = ? and c.group_id = ? and ${r.sql}`, [
    accountId,
    groupId,
    r.param,
  ]);
};

export const groupContactExists = async (em: EntityManager, accountId: number, groupId: number, ref: ContactRef) => {
  const r = refSql(ref);
  return (
    (await one(em, `select 1 from contacts c where c.account_id = ? and c.group_id = ? and ${r.sql}`, [accountId, groupId, r.param])) !==
    null
  );
};

/** Replaces a contact's fields (is_subscribed kept when null); undefined when there is no such contact. */
export const updateContactRow = (em: EntityManager, accountId: number, groupId: number, ref: ContactRef, c: ContactValues) => {
  const r = refSql(ref);
  return one<ContactRow>(
    em,
    `update contacts c set name = ?, country_code = ?, phone_number = ?, full_phone_number = ?, is_subscribed = coalesce(?::boolean, c.is_subscribed),
            custom_field_values = ?::jsonb, updated_at = now()
      where c.account_id = ? and c.group_id = ? and ${r.sql} returning ${COLUMNS}`,
    [
      c.name,
      c.countryCode,
      c.phoneNumber,
      c.fullPhoneNumber,
      c.isSubscribed,
      JSON.stringify(c.customFieldValues),
      accountId,
      groupId,
      r.param,
    ],
  );
};

export const deleteContactRow = (em: EntityManager, accountId: number, groupId: number, ref: ContactRef) => {
  const r = refSql(ref);
  return one<Pick<ContactRecord, 'id' | 'uid'>>(
    em,
    `delete from contacts c where c.account_id = ? and c.group_id = ? and ${r.sql} returning c.id, c.uid`,
    [accountId, groupId, r.param],
  );
};

/**
 * One page of a group's contacts, newest updated first, and how many match in all. `search` matches
 * the name or the national number (escaped LIKE patterns); `digits` too matches the number.
 */
export async function contactsPage(
  em: EntityManager,
  q: { accountId: number; groupId: number; search: { like: string; digitsLike: string | null } | null; limit: number; offset: number },
) {
  const where = ['c.account_id = ?', 'c.group_id = ?'];
  const params: unknown[] = [q.accountId, q.groupId];
  if (q.search) {
    const alternatives = ['c.name ilike ?', 'c.phone_number like ?'];
    params.push(q.search.like, q.search.like);
    if (q.search.digitsLike !== null) {
      alternatives.push('c.phone_number like ?');
      params.push(q.search.digitsLike);
    }
    where.push(`(${alternatives.join(' or ')})`);
  }
  const total = Number((await one<{ n: string }>(em, `select count(*) as n from contacts c where ${where.join(' and ')}`, params))!.n);
  const rows = await many<ContactRow>(
    em,
    `select ${COLUMNS} from contacts c where ${where.join(' and ')} order by c.updated_at desc, c.id desc limit ? offset ?`,
    [...params, q.limit, q.offset],
  );
  return { total, rows };
}

/** A contact of a campaign's audience. */
export type AudienceRow = Pick<ContactRecord, 'name' | 'country_code' | 'phone_number' | 'full_phone_number' | 'custom_field_values'> & {
  id: number;
};

/**
 * One keyset page of a group's audience: the account's contacts of the group with id > afterId, by
 * id. is_subscribed is deliberately not applied (the contract: a stored flag only).
 */
export async function audiencePage(
  em: EntityManager,
  q: { accountId: number; groupId: number; afterId: number; limit: number },
): Promise<AudienceRow[]> {
  const rows = await many<Omit<AudienceRow, 'id'> & Pick<ContactRecord, 'id'>>(
    em,
    `select c.id, c.name, c.country_code, c.phone_number, c.full_phone_number, c.custom_field_values
       from contacts c
      where c.group_id = ? and c.account_id = ? and c.id > ?
      order by c.id limit ?`,
    [q.groupId, q.accountId, q.afterId, q.limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}

/**
 * Whom an account-wide audience holds (occasion greetings): the contacts that opted in, of the
 * groups named (every group when null), and for a contact date, those whose `dateField` holds one of
 * the month-days (a stored `YYYY-MM-DD`, `MM-DD` or `--MM-DD`; domain/occasions contactMonthDay).
 */
export interface AccountAudience {
  groupIds: number[] | null;
  dateField: string | null;
  monthDays: string[] | null;
}

/** The audience's condition on the contacts row aliased `x`, with its parameters. */
function audienceCondition(x: 'c' | 'd', a: AccountAudience): { sql: string; params: unknown[] } {
  const parts = [`${x}.is_subscribed`];
  const params: unknown[] = [];
  if (a.groupIds !== null) {
    parts.push(`${x}.group_id = any(?::int[])`);
    params.push(a.groupIds);
  }
  if (a.dateField !== null) {
    // The field's name is a parameter, never SQL text; a value that is no date matches nothing.
    parts.push(`(case when btrim(${x}.custom_field_values ->> ?::text) ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ]|$)'
                      then substr(btrim(${x}.custom_field_values ->> ?::text), 6, 5)
                      when btrim(${x}.custom_field_values ->> ?::text) ~ '^(--)?[0-9]{2}-[0-9]{2}$'
                      then right(btrim(${x}.custom_field_values ->> ?::text), 5) end) = any(?::text[])`);
    params.push(a.dateField, a.dateField, a.dateField, a.dateField, a.monthDays ?? []);
  }
  return { sql: parts.join(' and '), params };
}

/**
 * One keyset page (id > afterId, by id) of an account-wide audience. A number held by several
 * contacts of the audience (the same person in two groups) is read once, with its first contact, so
 * it is greeted once.
 */
export async function accountAudiencePage(
  em: EntityManager,
  q: { accountId: number; audience: AccountAudience; afterId: number; limit: number },
): Promise<AudienceRow[]> {
  const c = audienceCondition('c', q.audience);
  const d = audienceCondition('d', q.audience);
  const rows = await many<Omit<AudienceRow, 'id'> & Pick<ContactRecord, 'id'>>(
    em,
    `select c.id, c.name, c.country_code, c.phone_number, c.full_phone_number, c.custom_field_values
       from contacts c
      where c.account_id = ? and c.id > ? and ${c.sql}
        and not exists (select 1 from contacts d
                         where d.account_id = c.account_id and d.full_phone_number = c.full_phone_number and d.id < c.id and ${d.sql})
      order by c.id limit ?`,
    [q.accountId, q.afterId, ...c.params, ...d.params, q.limit],
  );
  return rows.map((r) => ({ ...r, id: Number(r.id) }));
}
