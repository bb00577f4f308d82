import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import type { OccasionOverrides, WorkspaceDefaults } from '../../domain/occasions/index.js';

// The occasions family's statements: the only code that names occasion_overrides and
// occasion_defaults. A row holds only what the account changed; a null column inherits.

const db = (em: EntityManager) => tablesOf(em, 'occasions');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

type OverrideRecord = Row<'occasions', 'occasion_overrides'>;
type DefaultsRecord = Row<'occasions', 'occasion_defaults'>;

const OVERRIDE_FIELDS = [
  'kind',
  'name',
  'enabled',
  'message',
  'send_time',
  'sender_id',
  'date',
  'date_field',
  'contact_group_ids',
] as const satisfies readonly (keyof OverrideRecord & keyof OccasionOverrides)[];

export type StoredOverride = Pick<OverrideRecord, 'key' | 'updated_at'> & Required<OccasionOverrides>;
export type StoredDefaults = WorkspaceDefaults & { updated_at: string | null };

const overrideOf = (r: OverrideRecord): StoredOverride => ({
  key: r.key,
  kind: r.kind,
  name: r.name,
  enabled: r.enabled,
  message: r.message,
  send_time: r.send_time,
  sender_id: r.sender_id,
  date: r.date,
  date_field: r.date_field,
  contact_group_ids: r.contact_group_ids,
  updated_at: r.updated_at,
});

/** The account's stored overrides, by key. */
export async function overridesOf(em: EntityManager, accountId: number): Promise<StoredOverride[]> {
  const rows = await db(em).selectFrom('occasion_overrides').selectAll().where('account_id', '=', accountId).orderBy('key').execute();
  return rows.map(overrideOf);
}

export async function overrideOfKey(em: EntityManager, accountId: number, key: string): Promise<StoredOverride | null> {
  const row = await db(em)
    .selectFrom('occasion_overrides')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row ? overrideOf(row) : null;
}

/** The override row locked for this transaction (a card's writes are serialized by it). */
export async function lockOverride(em: EntityManager, accountId: number, key: string): Promise<StoredOverride | null> {
  const row = await db(em)
    .selectFrom('occasion_overrides')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('key', '=', key)
    .forUpdate()
    .executeTakeFirst();
  return row ? overrideOf(row) : null;
}

/** Stores the card's overrides as given (every field; null inherits). */
export async function saveOverride(em: EntityManager, accountId: number, key: string, o: Required<OccasionOverrides>) {
  const values = {
    kind: o.kind,
    name: o.name,
    enabled: o.enabled,
    message: o.message,
    send_time: o.send_time,
    sender_id: o.sender_id,
    date: o.date,
    date_field: o.date_field,
    contact_group_ids: o.contact_group_ids === null ? null : json(o.contact_group_ids),
  };
  const row = await db(em)
    .insertInto('occasion_overrides')
    .values({ account_id: accountId, key, ...values, created_at: sql`now()`, updated_at: sql`now()` })
    .onConflict((oc) => oc.columns(['account_id', 'key']).doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return overrideOf(row);
}

/** Removes what the account stored for the occasion; true when there was something. */
export async function deleteOverride(em: EntityManager, accountId: number, key: string): Promise<boolean> {
  const r = await db(em).deleteFrom('occasion_overrides').where('account_id', '=', accountId).where('key', '=', key).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

const defaultsOf = (r: DefaultsRecord | undefined): StoredDefaults => ({
  country: r?.country ?? null,
  time_zone: r?.time_zone ?? null,
  message: r?.message ?? null,
  send_time: r?.send_time ?? null,
  sender_id: r?.sender_id ?? null,
  contact_group_ids: r?.contact_group_ids ?? null,
  updated_at: r?.updated_at ?? null,
});

/** The workspace defaults (every field null when the account never set one). */
export async function defaultsOfAccount(em: EntityManager, accountId: number, lock = false): Promise<StoredDefaults> {
  let q = db(em).selectFrom('occasion_defaults').selectAll().where('account_id', '=', accountId);
  if (lock) q = q.forUpdate();
  return defaultsOf(await q.executeTakeFirst());
}

export async function saveDefaults(em: EntityManager, accountId: number, d: WorkspaceDefaults): Promise<StoredDefaults> {
  const values = { ...d, contact_group_ids: d.contact_group_ids === null ? null : json(d.contact_group_ids) };
  const row = await db(em)
    .insertInto('occasion_defaults')
    .values({ account_id: accountId, ...values, created_at: sql`now()`, updated_at: sql`now()` })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ ...values, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();
  return defaultsOf(row);
}

export { OVERRIDE_FIELDS };
