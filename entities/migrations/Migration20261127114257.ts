import { Migration } from '@mikro-orm/migrations';

// The storefront's limits per shop (docs/decisions.md, "The storefront cannot be hoarded"): quantity
// caps, the checkout window of orders from the anonymous page, the per-address hourly limits; and
// the client addresses of baskets opened and submitted from the page, which those limits count.

export class Migration20261127114257 extends Migration {
  override name = 'Migration20261127114257';

  override up(): void | Promise<void> {
    this.addSql(
      `alter table "catalogues" add "max_line_quantity" int not null default 10, add "max_basket_quantity" int not null default 50, add "checkout_hold_minutes" int not null default 15, add "address_baskets_per_hour" int not null default 20, add "address_orders_per_hour" int not null default 10;`,
    );

    this.addSql(
      `alter table "carts" add "opened_from" varchar(64) null, add "submitted_from" varchar(64) null, add "submitted_at" timestamptz null;`,
    );
    this.addSql(
      `create index "carts_opened_from_index" on "carts" ("catalogue_id", "opened_from", "created_at") where "opened_from" is not null;`,
    );
    this.addSql(
      `create index "carts_submitted_from_index" on "carts" ("catalogue_id", "submitted_from", "submitted_at") where "submitted_from" is not null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "carts_opened_from_index";`);
    this.addSql(`drop index "carts_submitted_from_index";`);
    this.addSql(`alter table "carts" drop column "opened_from", drop column "submitted_from", drop column "submitted_at";`);

    this.addSql(
      `alter table "catalogues" drop column "max_line_quantity", drop column "max_basket_quantity", drop column "checkout_hold_minutes", drop column "address_baskets_per_hour", drop column "address_orders_per_hour";`,
    );
  }
}
