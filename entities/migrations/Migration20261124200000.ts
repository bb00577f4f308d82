import { Migration } from '@mikro-orm/migrations';

export class Migration20261124200000 extends Migration {
  override name = 'Migration20261124200000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "data_groups" ("id" uuid not null, "account_id" int not null, "name" varchar(160) not null, "slug" varchar(64) not null, "description" text null, "icon" varchar(64) null, "table_ids" jsonb not null, "reports" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "data_groups" add constraint "data_groups_account_id_slug_unique" unique ("account_id", "slug");`);

    this.addSql(
      `create table "data_records" ("id" uuid not null, "seq" bigserial, "account_id" int not null, "table_id" uuid not null, "data" jsonb not null, "source" varchar(32) not null, "size_bytes" int not null, "created_at" timestamptz(6) not null, "updated_at" timestamptz(6) not null, "deleted_at" timestamptz(6) null, primary key ("id"));`,
    );
    this.addSql(`alter table "data_records" add constraint "data_records_seq_unique" unique ("seq");`);
    this.addSql(
      `create index "data_records_created_index" on "data_records" ("table_id", "created_at" desc, "seq" desc) where "deleted_at" is null;`,
    );
    this.addSql(
      `create index "data_records_updated_index" on "data_records" ("table_id", "updated_at" desc, "seq" desc) where "deleted_at" is null;`,
    );

    this.addSql(
      `create table "data_record_history" ("id" bigserial primary key, "account_id" int not null, "table_id" uuid not null, "record_id" uuid not null, "action" varchar(32) not null, "changes" jsonb not null, "actor" jsonb not null, "source" varchar(32) not null, "reason" text null, "created_at" timestamptz(6) not null);`,
    );
    this.addSql(`create index "data_record_history_record_id_id_index" on "data_record_history" ("record_id", "id");`);
    this.addSql(`create index "data_record_history_table_id_created_at_index" on "data_record_history" ("table_id", "created_at");`);

    this.addSql(
      `create table "data_tables" ("id" uuid not null, "account_id" int not null, "name" varchar(160) not null, "slug" varchar(64) not null, "description" text null, "icon" varchar(64) null, "title_column" varchar(63) null, "retention" jsonb not null, "legal_hold" boolean not null default false, "access" jsonb not null, "masks" jsonb not null, "status_fields" jsonb not null, "unique_sets" jsonb not null, "quotas" jsonb not null, "records_count" int not null default 0, "storage_bytes" bigint not null default '0', "auto_number_seq" bigint not null default '0', "search_index_status" text null, "search_index_columns" jsonb null, "search_index_error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "data_tables" add constraint "data_tables_account_id_slug_unique" unique ("account_id", "slug");`);

    this.addSql(
      `create table "data_columns" ("id" uuid not null, "account_id" int not null, "table_id" uuid not null, "key" varchar(63) not null, "label" varchar(160) not null, "type" text not null, "stored_type" varchar(64) null, "position" int not null, "required" boolean not null default false, "unique" boolean not null default false, "indexed" boolean not null default false, "index_status" text null, "index_error" text null, "index_name" varchar(63) null, "index_progress" jsonb null, "config" jsonb not null, "ui" jsonb not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "data_columns" add constraint "data_columns_table_id_key_unique" unique ("table_id", "key");`);

    this.addSql(
      `create table "data_unique_values" ("table_id" uuid not null, "set_key" varchar(80) not null, "value" text not null, "record_id" uuid not null, primary key ("table_id", "set_key", "value"));`,
    );
    this.addSql(`create index "data_unique_values_record_id_index" on "data_unique_values" ("record_id");`);

    this.addSql(
      `alter table "data_tables" add constraint "data_tables_search_index_status_check" check ("search_index_status" in ('pending', 'building', 'ready', 'failed', 'dropping'));`,
    );

    this.addSql(
      `alter table "data_columns" add constraint "data_columns_table_id_foreign" foreign key ("table_id") references "data_tables" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "data_columns" add constraint "data_columns_type_check" check ("type" in ('text', 'long_text', 'number', 'currency', 'boolean', 'date', 'datetime', 'phone', 'email', 'select', 'multi_select', 'relation', 'file', 'auto_number', 'unknown'));`,
    );
    this.addSql(
      `alter table "data_columns" add constraint "data_columns_index_status_check" check ("index_status" in ('pending', 'building', 'ready', 'failed', 'dropping'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "data_columns" drop constraint "data_columns_table_id_foreign";`);

    this.addSql(`drop table if exists "data_groups" cascade;`);
    this.addSql(`drop table if exists "data_records" cascade;`);
    this.addSql(`drop table if exists "data_record_history" cascade;`);
    this.addSql(`drop table if exists "data_tables" cascade;`);
    this.addSql(`drop table if exists "data_columns" cascade;`);
    this.addSql(`drop table if exists "data_unique_values" cascade;`);
  }
}
