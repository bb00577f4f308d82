import { Migration } from '@mikro-orm/migrations';

// Contact groups, contacts and bulk imports. Hand-written: other migrations land beside it at the
// same time, so it cannot be diffed from a shared snapshot.
export class Migration20261122050000 extends Migration {
  override name = 'Migration20261122050000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "contact_groups" ("id" serial primary key, "uid" uuid not null, "account_id" int not null, "name" varchar(160) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`alter table "contact_groups" add constraint "contact_groups_uid_unique" unique ("uid");`);
    this.addSql(`create index "contact_groups_account_id_id_index" on "contact_groups" ("account_id", "id");`);

    this.addSql(
      `create table "contacts" ("id" bigserial primary key, "uid" varchar(40) not null, "account_id" int not null, "group_id" int not null, "name" varchar(160) not null, "country_code" varchar(8) not null default '', "phone_number" varchar(64) not null, "full_phone_number" varchar(72) not null, "is_subscribed" boolean not null default true, "custom_field_values" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`alter table "contacts" add constraint "contacts_uid_unique" unique ("uid");`);
    this.addSql(
      `create index "contacts_account_id_group_id_updated_at_id_index" on "contacts" ("account_id", "group_id", "updated_at", "id");`,
    );
    this.addSql(`create index "contacts_group_id_id_index" on "contacts" ("group_id", "id");`);
    this.addSql(`create index "contacts_group_id_full_phone_number_index" on "contacts" ("group_id", "full_phone_number");`);

    this.addSql(
      `create table "contact_imports" ("id" bigserial primary key, "account_id" int not null, "group_id" int not null, "format" text not null, "status" text not null default 'queued', "total_rows" int not null, "processed_rows" int not null default 0, "created_count" int not null default 0, "updated_count" int not null default 0, "failed_count" int not null default 0, "problems" jsonb not null, "problems_truncated" boolean not null default false, "error_message" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null);`,
    );
    this.addSql(`create index "contact_imports_account_id_id_index" on "contact_imports" ("account_id", "id");`);

    this.addSql(
      `create table "contact_import_rows" ("import_id" bigint not null, "row_no" int not null, "line" int null, "data" jsonb not null, "note" text null, primary key ("import_id", "row_no"));`,
    );

    this.addSql(
      `alter table "contacts" add constraint "contacts_group_id_foreign" foreign key ("group_id") references "contact_groups" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_group_id_foreign" foreign key ("group_id") references "contact_groups" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "contact_import_rows" add constraint "contact_import_rows_import_id_foreign" foreign key ("import_id") references "contact_imports" ("id") on delete cascade;`,
    );

    this.addSql(`alter table "contact_imports" add constraint "contact_imports_format_check" check ("format" in ('json', 'csv'));`);
    this.addSql(
      `alter table "contact_imports" add constraint "contact_imports_status_check" check ("status" in ('queued', 'running', 'completed', 'failed'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "contact_import_rows" cascade;`);
    this.addSql(`drop table if exists "contact_imports" cascade;`);
    this.addSql(`drop table if exists "contacts" cascade;`);
    this.addSql(`drop table if exists "contact_groups" cascade;`);
  }
}
