import { Migration } from '@mikro-orm/migrations';

// Payment reconciliation (issue 26 point 5): the disagreements found between our ledger and the
// provider's report, each once per provider and key, and an index on the provider_clearing legs by
// time, which each run reads for its period (entities/payments.ts, docs/payments.md).

export class Migration20261127210751 extends Migration {
  override name = 'Migration20261127210751';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "payment_mismatches" ("id" bigserial primary key, "provider" varchar(64) not null, "kind" text not null, "settlement" text not null, "key" varchar(300) not null, "account_id" int null, "payment_id" uuid null, "reference" varchar(32) null, "provider_ref" varchar(191) null, "receipt" varchar(64) null, "our_amount_minor" bigint null, "provider_amount_minor" bigint null, "currency" varchar(3) null, "provider_currency" varchar(3) null, "payer" varchar(32) null, "occurred_at" timestamptz not null, "found_by" varchar(200) not null, "found_at" timestamptz not null);`,
    );
    this.addSql(`create index "payment_mismatches_found_index" on "payment_mismatches" ("found_at", "id");`);
    this.addSql(`create index "payment_mismatches_account_index" on "payment_mismatches" ("account_id", "found_at", "id");`);
    this.addSql(`alter table "payment_mismatches" add constraint "payment_mismatches_provider_key_unique" unique ("provider", "key");`);

    this.addSql(
      `create index "ledger_entries_clearing_index" on "ledger_entries" ("occurred_at", "payment_id") where "account" = 'provider_clearing';`,
    );

    this.addSql(
      `alter table "payment_mismatches" add constraint "payment_mismatches_payment_id_foreign" foreign key ("payment_id") references "payments" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "payment_mismatches" add constraint "payment_mismatches_kind_check" check ("kind" in ('missing_at_provider', 'missing_in_ours', 'amount_differs'));`,
    );
    this.addSql(
      `alter table "payment_mismatches" add constraint "payment_mismatches_settlement_check" check ("settlement" in ('payment', 'reversal'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "payment_mismatches" cascade;`);

    this.addSql(`drop index "ledger_entries_clearing_index";`);
  }
}
