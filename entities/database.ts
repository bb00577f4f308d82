import type { ColumnType, Kysely, Selectable } from 'kysely';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { InferKyselyDB } from '@mikro-orm/sql';
import type * as account from './account.js';
import type * as automations from './automations.js';
import type * as campaigns from './campaigns.js';
import type * as catalogues from './catalogues.js';
import type * as contacts from './contacts.js';
import type * as data from './data.js';
import type * as flows from './flows.js';
import type * as groups from './groups.js';
import type * as messaging from './messaging.js';
import type * as oauth from './oauth.js';
import type * as orders from './orders.js';
import type * as payments from './payments.js';
import type * as occasions from './occasions.js';
import type * as leads from './leads.js';
import type * as posts from './posts.js';
import type * as agents from './agents.js';
import type * as forms from './forms.js';
import type * as shop from './shop.js';
import type * as templates from './templates.js';
import type * as webhooks from './webhooks.js';

// The Kysely types of every table, inferred from the entities (docs/decisions.md "One declaration
// per column"): a column is declared once, in its family's entity file, and the migration, the
// query types and the answer types all follow from it.
//
// The types say what a statement run through `em.getKysely()` really returns, which is the pg
// driver's text for some types, not what the ORM would hydrate: MikroORM's pool keeps timestamps
// as text ('2026-11-27 14:51:33.123+00'), and bigint columns come back as decimal strings (their
// entities say `p.bigint('string')` for that reason). A timestamp may be written as a Date or text.

/** The entity schemas among a family file's exports. */
type SchemasOf<F> = Extract<F[keyof F], { name: string; meta: unknown }>;

/** A timestamp reads as text; Date | null reads as string | null. */
type AsText<V> = V extends Date ? string : V;
type Stored<V> =
  V extends ColumnType<infer S, infer I, infer U>
    ? ColumnType<AsText<S>, I | AsText<I>, U | AsText<U>>
    : Date extends V
      ? ColumnType<AsText<V>, V | AsText<V>, V | AsText<V>>
      : Extract<V, Date> extends never
        ? V
        : ColumnType<AsText<V>, V | AsText<V>, V | AsText<V>>;
type StoredTables<DB> = { [T in keyof DB]: { [C in keyof DB[T]]: Stored<DB[T][C]> } };
type Tables<F> = StoredTables<InferKyselyDB<SchemasOf<F>>>;

/** The tables each family owns, by family name: a family's store is typed to its own tables only. */
export interface FamilyTables {
  account: Tables<typeof account>;
  automations: Tables<typeof automations>;
  campaigns: Tables<typeof campaigns>;
  catalogues: Tables<typeof catalogues>;
  contacts: Tables<typeof contacts>;
  data: Tables<typeof data>;
  flows: Tables<typeof flows>;
  groups: Tables<typeof groups>;
  messaging: Tables<typeof messaging>;
  oauth: Tables<typeof oauth>;
  orders: Tables<typeof orders>;
  payments: Tables<typeof payments>;
  occasions: Tables<typeof occasions>;
  leads: Tables<typeof leads>;
  posts: Tables<typeof posts>;
  agents: Tables<typeof agents>;
  forms: Tables<typeof forms>;
  shop: Tables<typeof shop>;
  templates: Tables<typeof templates>;
  webhooks: Tables<typeof webhooks>;
  /** Kept by hand-written SQL in the migrations (an unlogged table the ORM does not describe). */
  platform: {
    rate_limit_windows: { bucket: string; window_start: string; count: ColumnType<number, number | undefined, number> };
  };
}

export type Family = keyof FamilyTables;

/** Every table of the application (for tools that span families: migrations checks, benches). */
export type Database = FamilyTables[Family] extends infer U
  ? (U extends unknown ? (k: U) => void : never) extends (k: infer I) => void
    ? I
    : never
  : never;

/**
 * A family's tables as a typed Kysely instance on this entity manager (its transaction when there is
 * one). Typed to that family's tables only, so a query naming another family's table does not
 * compile: the family's store asks the owner's index instead.
 */
export function tablesOf<F extends Family>(em: EntityManager, _family: F): Kysely<FamilyTables[F]> {
  return em.getKysely() as unknown as Kysely<FamilyTables[F]>;
}

/** One table's row as a statement reads it back (for the typed result of a hand-written statement). */
export type Row<F extends Family, T extends keyof FamilyTables[F]> = Selectable<FamilyTables[F][T]>;
