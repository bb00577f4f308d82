import { Migration } from '@mikro-orm/migrations';

// Issue 12, inventory: account notices (what the service tells an account: low stock, a feed switched
// off), and the platform pushes an inventory push owes (started after the commit, repaired by the
// worker's reconciler).

export class Migration20261124184000 extends Migration {
  override name = 'Migration20261124184000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "account_notices" ("id" bigserial primary key, "account_id" int not null, "kind" varchar(64) not null, "message" text not null, "data" jsonb not null, "dedupe_key" varchar(200) null, "created_at" timestamptz not null, "read_at" timestamptz null);`,
    );
    this.addSql(`create index "account_notices_account_id_id_index" on "account_notices" ("account_id", "id");`);
    this.addSql(
      `alter table "account_notices" add constraint "account_notices_account_id_dedupe_key_unique" unique ("account_id", "dedupe_key");`,
    );

    this.addSql(
      `create table "product_push_requests" ("id" bigserial primary key, "account_id" int not null, "catalogue_id" int not null, "push_id" varchar(100) not null, "product_ids" jsonb not null, "cause" jsonb not null, "created_at" timestamptz not null, "started_at" timestamptz null);`,
    );
    this.addSql(`alter table "product_push_requests" add constraint "product_push_requests_push_id_unique" unique ("push_id");`);
    this.addSql(`create index "product_push_requests_started_at_id_index" on "product_push_requests" ("started_at", "id");`);
    this.addSql(
      `alter table "product_push_requests" add constraint "product_push_requests_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "product_push_requests" cascade;`);
    this.addSql(`drop table if exists "account_notices" cascade;`);
  }
}
