import { Migration } from '@mikro-orm/migrations';

// Payments (issue 26): the payments themselves (refunds are payments linked by refund_of), their
// timeline and their double-entry ledger (entities/payments.ts, docs/payments.md).

export class Migration20261127190843 extends Migration {
  override name = 'Migration20261127190843';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "payments" ("id" uuid not null, "account_id" int not null, "reference" varchar(32) not null, "state" text not null default 'draft', "amount_minor" bigint not null, "currency" varchar(3) not null, "refunded_minor" bigint not null default '0', "subject_id" varchar(191) null, "subject_type" varchar(64) null, "is_refund" boolean not null default false, "refund_of" uuid null, "reason" text null, "payer" varchar(191) null, "method" varchar(32) null, "provider" varchar(64) null, "provider_ref" varchar(191) null, "attempts" int not null default 0, "last_error" text null, "expires_at" timestamptz null, "settled_at" timestamptz null, "checkout_url" text null, "checkout_code" varchar(64) null, "created_by" varchar(191) null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "payments_account_created_index" on "payments" ("account_id", "created_at", "id");`);
    this.addSql(`create index "payments_account_state_index" on "payments" ("account_id", "state", "created_at", "id");`);
    this.addSql(`create index "payments_account_subject_index" on "payments" ("account_id", "subject_id", "created_at", "id");`);
    this.addSql(
      `create index "payments_open_index" on "payments" ("account_id", "created_at", "id") where "state" in ('draft', 'pending', 'authorised');`,
    );
    this.addSql(`create index "payments_refunds_index" on "payments" ("refund_of", "created_at") where "refund_of" is not null;`);
    this.addSql(
      `create unique index "payments_provider_ref_unique" on "payments" ("provider", "provider_ref") where "provider_ref" is not null;`,
    );
    this.addSql(`alter table "payments" add constraint "payments_account_id_reference_unique" unique ("account_id", "reference");`);

    this.addSql(
      `create table "ledger_entries" ("id" bigserial primary key, "account_id" int not null, "payment_id" uuid not null, "entry_no" int not null, "kind" text not null, "direction" text not null, "account" text not null, "amount_minor" bigint not null, "currency" varchar(3) not null, "occurred_at" timestamptz not null);`,
    );
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_payment_id_entry_no_unique" unique ("payment_id", "entry_no");`,
    );

    this.addSql(
      `create table "payment_events" ("id" bigserial primary key, "account_id" int not null, "payment_id" uuid not null, "old_state" text null, "new_state" text not null, "refused" text null, "source" varchar(64) not null, "message" text null, "occurred_at" timestamptz not null);`,
    );
    this.addSql(`create index "payment_events_payment_id_occurred_at_id_index" on "payment_events" ("payment_id", "occurred_at", "id");`);

    this.addSql(`alter table "payments" add constraint "payments_amount_check" check (amount_minor > 0);`);
    this.addSql(
      `alter table "payments" add constraint "payments_refunded_check" check (refunded_minor >= 0 and refunded_minor <= amount_minor);`,
    );
    this.addSql(
      `alter table "payments" add constraint "payments_state_check" check ("state" in ('draft', 'pending', 'authorised', 'paid', 'partly_refunded', 'refunded', 'failed', 'expired', 'cancelled'));`,
    );

    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_payment_id_foreign" foreign key ("payment_id") references "payments" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_amount_check" check (amount_minor > 0);`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_kind_check" check ("kind" in ('charge', 'refund'));`);
    this.addSql(`alter table "ledger_entries" add constraint "ledger_entries_direction_check" check ("direction" in ('debit', 'credit'));`);
    this.addSql(
      `alter table "ledger_entries" add constraint "ledger_entries_account_check" check ("account" in ('provider_clearing', 'customer_payments'));`,
    );

    this.addSql(
      `alter table "payment_events" add constraint "payment_events_payment_id_foreign" foreign key ("payment_id") references "payments" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "payment_events" add constraint "payment_events_old_state_check" check ("old_state" in ('draft', 'pending', 'authorised', 'paid', 'partly_refunded', 'refunded', 'failed', 'expired', 'cancelled'));`,
    );
    this.addSql(
      `alter table "payment_events" add constraint "payment_events_new_state_check" check ("new_state" in ('draft', 'pending', 'authorised', 'paid', 'partly_refunded', 'refunded', 'failed', 'expired', 'cancelled'));`,
    );
    this.addSql(
      `alter table "payment_events" add constraint "payment_events_refused_check" check ("refused" in ('draft', 'pending', 'authorised', 'paid', 'partly_refunded', 'refunded', 'failed', 'expired', 'cancelled'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "ledger_entries" drop constraint "ledger_entries_payment_id_foreign";`);
    this.addSql(`alter table "payment_events" drop constraint "payment_events_payment_id_foreign";`);

    this.addSql(`drop table if exists "payments" cascade;`);
    this.addSql(`drop table if exists "ledger_entries" cascade;`);
    this.addSql(`drop table if exists "payment_events" cascade;`);
  }
}
