import { Migration } from '@mikro-orm/migrations';

// A table's definition version (services/data/tables.ts, the definition cache), bumped by the
// database on every definition change whoever makes it (operator API, index workflow, a hand-run
// statement); record writes move only the counters and leave it alone. Generated from the
// entities' triggers (entities/data.ts).

export class Migration20261125000000 extends Migration {
  override name = 'Migration20261125000000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "data_tables" add "definition_version" bigint not null default '1';`);
    this.addSql(
      `create or replace function "data_tables_data_tables_definition_bump_fn"() returns trigger as $$ begin new.definition_version := old.definition_version + 1; return new; end; $$ language plpgsql;`,
    );
    this.addSql(`create trigger "data_tables_definition_bump" BEFORE UPDATE on "data_tables" for each ROW
  when (((old.records_count = new.records_count) AND (old.storage_bytes = new.storage_bytes) AND (old.auto_number_seq = new.auto_number_seq) AND (old.definition_version = new.definition_version))) execute function "data_tables_data_tables_definition_bump_fn"();`);

    this.addSql(
      `create or replace function "data_columns_data_columns_definition_bump_fn"() returns trigger as $$ begin update data_tables set definition_version = definition_version + 1 where id = coalesce(new.table_id, old.table_id); return null; end; $$ language plpgsql;`,
    );
    this.addSql(
      `create trigger "data_columns_definition_bump" AFTER INSERT OR UPDATE OR DELETE on "data_columns" for each ROW execute function "data_columns_data_columns_definition_bump_fn"();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "data_columns_definition_bump" on "data_columns";`);
    this.addSql(`drop function if exists "data_columns_data_columns_definition_bump_fn"();`);

    this.addSql(`drop trigger if exists "data_tables_definition_bump" on "data_tables";`);
    this.addSql(`drop function if exists "data_tables_data_tables_definition_bump_fn"();`);
    this.addSql(`alter table "data_tables" drop column "definition_version";`);
  }
}
