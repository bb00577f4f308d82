import { Migration } from '@mikro-orm/migrations';

// Issue 12, batch sync: a run keeps the products its rows landed on (`landed`, written with each
// applied chunk, whose staged rows are deleted in the same transaction), and each product names the
// sync run that last created, changed or retired it (what that run pushes; its retired count). That
// column has no index of its own: an indexed column would make every re-sync update non-HOT (five
// index entries per product instead of none); the run's products are read within its shop's rows.

export class Migration20261124183000 extends Migration {
  override name = 'Migration20261124183000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalogue_syncs" add column "landed" jsonb not null default '{}';`);
    this.addSql(`alter table "products" add column "last_sync_id" bigint null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "products" drop column "last_sync_id";`);
    this.addSql(`alter table "catalogue_syncs" drop column "landed";`);
  }
}
