import { Migration } from '@mikro-orm/migrations';

// Orders and stock holds (issue 13), baskets and their items, product sizes (variants) and add-ons,
// category slugs for shop links. Named after the hand-written catalogue migrations so it runs last.

export class Migration20261124191000 extends Migration {
  override name = 'Migration20261124191000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "carts" ("id" bigserial primary key, "account_id" int not null, "catalogue_id" int not null, "ref" varchar(5) not null, "status" text not null default 'open', "conversation_id" varchar(191) null, "customer_handle" varchar(191) null, "note" text null, "subtotal_minor" bigint not null default '0', "currency" varchar(3) not null, "order_id" bigint null, "opens" jsonb not null, "last_activity_at" timestamptz not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "carts_account_id_id_index" on "carts" ("account_id", "id");`);
    this.addSql(`alter table "carts" add constraint "carts_account_id_ref_unique" unique ("account_id", "ref");`);

    this.addSql(
      `create table "orders" ("id" bigserial primary key, "account_id" int not null, "catalogue_id" int not null, "status" text not null default 'pending', "platform" text not null, "customer_handle" varchar(191) null, "provider_message_id" varchar(128) null, "product_items" jsonb not null, "total_amount" bigint not null, "total_currency" varchar(3) not null, "needs_attention" boolean not null default false, "cart_id" bigint null, "note" text null, "hold_expires_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "orders_account_id_updated_at_id_index" on "orders" ("account_id", "updated_at", "id");`);
    this.addSql(`create index "orders_catalogue_id_id_index" on "orders" ("catalogue_id", "id");`);
    this.addSql(
      `alter table "orders" add constraint "orders_account_id_provider_message_id_unique" unique ("account_id", "provider_message_id");`,
    );

    this.addSql(
      `create table "product_addons" ("id" bigserial primary key, "product_id" bigint not null, "name" varchar(100) not null, "price" bigint not null, "position" int not null default 0, "created_at" timestamptz not null);`,
    );
    this.addSql(`alter table "product_addons" add constraint "product_addons_product_id_name_unique" unique ("product_id", "name");`);

    this.addSql(
      `create table "product_variants" ("id" bigserial primary key, "product_id" bigint not null, "name" varchar(100) not null, "price" bigint not null, "position" int not null default 0, "created_at" timestamptz not null);`,
    );
    this.addSql(`alter table "product_variants" add constraint "product_variants_product_id_name_unique" unique ("product_id", "name");`);

    this.addSql(
      `create table "cart_items" ("id" bigserial primary key, "cart_id" bigint not null, "product_id" bigint not null, "variant_id" bigint null, "addon_ids" jsonb not null, "quantity" int not null, "note" text null, "unit_price_minor" bigint not null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "cart_items_cart_id_id_index" on "cart_items" ("cart_id", "id");`);

    this.addSql(
      `create table "stock_holds" ("id" bigserial primary key, "account_id" int not null, "order_id" bigint not null, "product_id" bigint not null, "quantity" int not null, "status" text not null default 'held', "expires_at" timestamptz not null, "created_at" timestamptz not null, "resolved_at" timestamptz null);`,
    );
    this.addSql(`create index "stock_holds_product_id_status_index" on "stock_holds" ("product_id", "status");`);
    this.addSql(`alter table "stock_holds" add constraint "stock_holds_order_id_product_id_unique" unique ("order_id", "product_id");`);

    this.addSql(`alter table "product_categories" add "slug" varchar(255) null;`);
    this.addSql(
      `alter table "product_categories" add constraint "product_categories_catalogue_id_slug_unique" unique ("catalogue_id", "slug");`,
    );

    this.addSql(
      `alter table "carts" add constraint "carts_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "carts" add constraint "carts_status_check" check ("status" in ('open', 'sent', 'ordered', 'abandoned', 'expired'));`,
    );

    this.addSql(
      `alter table "orders" add constraint "orders_catalogue_id_foreign" foreign key ("catalogue_id") references "catalogues" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "orders" add constraint "orders_status_check" check ("status" in ('pending', 'confirmed', 'processing', 'shipped', 'delivered', 'cancelled', 'refunded'));`,
    );
    this.addSql(
      `alter table "orders" add constraint "orders_platform_check" check ("platform" in ('whatsapp', 'storefront', 'ivr', 'manual'));`,
    );

    this.addSql(
      `alter table "product_addons" add constraint "product_addons_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "product_variants" add constraint "product_variants_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );

    this.addSql(
      `alter table "cart_items" add constraint "cart_items_cart_id_foreign" foreign key ("cart_id") references "carts" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "cart_items" add constraint "cart_items_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "cart_items" add constraint "cart_items_variant_id_foreign" foreign key ("variant_id") references "product_variants" ("id") on delete set null;`,
    );

    this.addSql(
      `alter table "stock_holds" add constraint "stock_holds_order_id_foreign" foreign key ("order_id") references "orders" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "stock_holds" add constraint "stock_holds_product_id_foreign" foreign key ("product_id") references "products" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "stock_holds" add constraint "stock_holds_status_check" check ("status" in ('held', 'committed', 'released', 'expired'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "cart_items" drop constraint "cart_items_cart_id_foreign";`);
    this.addSql(`alter table "stock_holds" drop constraint "stock_holds_order_id_foreign";`);
    this.addSql(`alter table "cart_items" drop constraint "cart_items_variant_id_foreign";`);

    this.addSql(`drop table if exists "carts" cascade;`);
    this.addSql(`drop table if exists "orders" cascade;`);
    this.addSql(`drop table if exists "product_addons" cascade;`);
    this.addSql(`drop table if exists "product_variants" cascade;`);
    this.addSql(`drop table if exists "cart_items" cascade;`);
    this.addSql(`drop table if exists "stock_holds" cascade;`);

    this.addSql(`alter table "product_categories" drop constraint "product_categories_catalogue_id_slug_unique";`);
    this.addSql(`alter table "product_categories" drop column "slug";`);
  }
}
