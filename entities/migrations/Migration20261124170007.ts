import { Migration } from '@mikro-orm/migrations';

// The catalogue family (issue 12): shops, products, brands and categories, platform listings, sync
// runs with their staged rows, feeds, and the stock ledger.

export class Migration20261124170007 extends Migration {
  override name = 'Migration20261124170007';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "catalogues" ("id" serial primary key, "account_id" int not null, "name" varchar(100) not null, "description" text null, "vertical" varchar(64) null, "default_currency" varchar(3) null, "meta_catalogue_id" varchar(64) null, "channels" jsonb not null, "sku_prefix" varchar(16) not null, "sku_seq" bigint not null default '0', "stock_policy" text not null default 'external', "source_of_truth" text not null default 'api', "reservation_ttl_hours" int not null default 48, "low_stock_threshold" int null, "allow_backorders" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "catalogues_account_id_id_index" on "catalogues" ("account_id", "id");`);

    this.addSql(
      `create table "catalogue_feeds" ("id" serial primary key, "account_id" int not null, "catalogue_id" int not null, "url" varchar(2048) not null, "schedule" varchar(64) null, "mapping" jsonb not null, "mode" text not null default 'replace', "format" varchar(8) null, "enabled" boolean not null default true, "consecutive_failures" int not null default 0, "last_sync_id" bigint null, "last_row_count" int null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "catalogue_feeds_catalogue_id_id_index" on "catalogue_feeds" ("catalogue_id", "id");`);

    this.addSql(
      `create table "catalogue_syncs" ("id" bigserial primary key, "account_id" int not null, "catalogue_id" int not null, "kind" text not null, "feed_id" int null, "mode" text not null default 'upsert', "status" text not null default 'queued', "idempotency_key" varchar(255) null, "request_hash" varchar(64) null, "received" int not null default 0, "created" int not null default 0, "updated" int not null default 0, "rejected" int not null default 0, "retired" int not null default 0, "platforms" jsonb not null, "problems" jsonb not null, "problems_truncated" boolean not null default false, "failure_reason" text null, "created_at" timestamptz not null, "started_at" timestamptz null, "finished_at" timestamptz null);`,
    );
    this.addSql(`create index "catalogue_syncs_catalogue_id_id_index" on "catalogue_syncs" ("catalogue_id", "id");`);
    this.addSql(
      `alter table "catalogue_syncs" add constraint "catalogue_syncs_catalogue_id_idempotency_key_unique" unique ("catalogue_id", "idempotency_key");`,
    );

    this.addSql(
      `create table "catalogue_sync_rows" ("sync_id" bigint not null, "row_no" int not null, "data" jsonb not null, primary key ("sync_id", "row_no"));`,
    );

    this.addSql(
      `create table "product_brands" ("id" serial primary key, "catalogue_id" int not null, "name" varchar(255) not null, "created_at" timestamptz not null);`,
    );
    this.addSql(`alter table "product_brands" add constraint "product_brands_catalogue_id_name_unique" unique ("catalogue_id", "name");`);

    this.addSql(
      `create table "product_categories" ("id" serial primary key, "catalogue_id" int not null, "name" varchar(255) not null, "created_at" timestamptz not null);`,
    );
    this.addSql(
      `alter table "product_categories" add constraint "product_categories_catalogue_id_name_unique" unique ("catalogue_id", "name");`,
    );

    this.addSql(
      `create table "products" ("id" bigserial primary key, "account_id" int not null, "catalogue_id" int not null, "sku" varchar(100) not null, "name" varchar(100) not null, "description" text null, "price" bigint not null, "sale_price" bigint null, "currency" varchar(3) not null, "image_url" varchar(2048) null, "availability" text not null, "availability_explicit" boolean not null default false, "condition" text null, "inventory" int null, "reserved" int not null default 0, "visibility" text not null default 'published', "brand_id" int null, "category_id" int null, "product_type" varchar(750) null, "meta_product_id" varchar(64) null, "revision" int not null default 1, "retired_at" timestamptz null, "low_stock_noticed_on" date null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "products_catalogue_id_name_id_index" on "products" ("catalogue_id", "name", "id");`);
    this.addSql(`create index "products_account_id_id_index" on "products" ("account_id", "id");`);
    this.addSql(`alter table "products" add constraint "products_catalogue_id_sku_unique" unique ("catalogue_id", "sku");`);

    this.addSql(
      `create table "product_listings" ("product_id" bigint not null, "platform" varchar(32) not null, "state" text not null default 'pending', "problem" text null, "drift" jsonb null, "platform_item_id" varchar(64) null, "pushed_revision" int not null default 0, "checked_at" timestamptz null, "updated_at" timestamptz not null, primary key ("product_id", "platform"));`,
    );

    this.addSql(
      `create table "stock_movements" ("id" bigserial primary key, "account_id" int not null, "product_id" bigint not null, "kind" text not null, "quantity" int not null, "inventory_after" int null, "reserved_after" int not null, "available_after" int null, "cause" jsonb not null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "stock_movements_product_id_id_index" on "stock_movements" ("product_id", "id");`);

    this.addSql(`alter table "catalogues" add constraint "catalogues_stock_policy_check" check ("stock_policy" in ('external', 'svc'));`);
    this.addSql(
      `alter table "catalogues" add constraint "catalogues_source_of_truth_check" check ("source_of_truth" in ('api', 'svc', 'platform'));`,
    );

    this.addSql(
      `alter table "catalogue_feeds" add constraint "catalogue_feeds_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "catalogue_feeds" add constraint "catalogue_feeds_mode_check" check ("mode" in ('upsert', 'replace'));`);

    this.addSql(
      `alter table "catalogue_syncs" add constraint "catalogue_syncs_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
    this.addSql(`alter table "catalogue_syncs" add constraint "catalogue_syncs_kind_check" check ("kind" in ('batch', 'feed', 'import'));`);
    this.addSql(`alter table "catalogue_syncs" add constraint "catalogue_syncs_mode_check" check ("mode" in ('upsert', 'replace'));`);
    this.addSql(
      `alter table "catalogue_syncs" add constraint "catalogue_syncs_status_check" check ("status" in ('queued', 'running', 'completed', 'failed'));`,
    );

    this.addSql(
      `alter table "catalogue_sync_rows" add constraint "catalogue_sync_rows_sync_id_foreign" foreign key ("sync_id") references "catalogue_syncs" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "product_brands" add constraint "product_brands_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "product_categories" add constraint "product_categories_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "products" add constraint "products_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "products" add constraint "products_brand_id_foreign" foreign key ("brand_id") references "product_brands" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "products" add constraint "products_category_id_foreign" foreign key ("category_id") references "product_categories" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "products" add constraint "products_availability_check" check ("availability" in ('in stock', 'out of stock', 'preorder', 'available for order', 'discontinued'));`,
    );
    this.addSql(`alter table "products" add constraint "products_condition_check" check ("condition" in ('new', 'refurbished', 'used'));`);
    this.addSql(`alter table "products" add constraint "products_visibility_check" check ("visibility" in ('staging', 'published'));`);

    this.addSql(
      `alter table "product_listings" add constraint "product_listings_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "product_listings" add constraint "product_listings_state_check" check ("state" in ('pending', 'syncing', 'synced', 'failed', 'blocked', 'drifted'));`,
    );

    this.addSql(
      `alter table "stock_movements" add constraint "stock_movements_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "stock_movements" add constraint "stock_movements_kind_check" check ("kind" in ('reserve', 'release', 'commit', 'adjust', 'sync'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "catalogue_feeds" drop constraint "catalogue_feeds_catalogue_id_foreign";`);
    this.addSql(`alter table "catalogue_syncs" drop constraint "catalogue_syncs_catalogue_id_foreign";`);
    this.addSql(`alter table "product_brands" drop constraint "product_brands_catalogue_id_foreign";`);
    this.addSql(`alter table "product_categories" drop constraint "product_categories_catalogue_id_foreign";`);
    this.addSql(`alter table "products" drop constraint "products_catalogue_id_foreign";`);
    this.addSql(`alter table "catalogue_sync_rows" drop constraint "catalogue_sync_rows_sync_id_foreign";`);
    this.addSql(`alter table "products" drop constraint "products_brand_id_foreign";`);
    this.addSql(`alter table "products" drop constraint "products_category_id_foreign";`);
    this.addSql(`alter table "product_listings" drop constraint "product_listings_product_id_foreign";`);
    this.addSql(`alter table "stock_movements" drop constraint "stock_movements_product_id_foreign";`);

    this.addSql(`drop table if exists "catalogues" cascade;`);
    this.addSql(`drop table if exists "catalogue_feeds" cascade;`);
    this.addSql(`drop table if exists "catalogue_syncs" cascade;`);
    this.addSql(`drop table if exists "catalogue_sync_rows" cascade;`);
    this.addSql(`drop table if exists "product_brands" cascade;`);
    this.addSql(`drop table if exists "product_categories" cascade;`);
    this.addSql(`drop table if exists "products" cascade;`);
    this.addSql(`drop table if exists "product_listings" cascade;`);
    this.addSql(`drop table if exists "stock_movements" cascade;`);
  }
}
