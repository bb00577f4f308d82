import { Migration } from '@mikro-orm/migrations';

// The shop page's secret key of a basket (docs/decisions.md, "Shop links, baskets and the shop page").

export class Migration20261124194000 extends Migration {
  override name = 'Migration20261124194000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "carts" add "page_key" varchar(32) not null;`);
    this.addSql(`alter table "carts" add constraint "carts_page_key_unique" unique ("page_key");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "carts" drop constraint "carts_page_key_unique";`);
    this.addSql(`alter table "carts" drop column "page_key";`);
  }
}
