import { Migration } from '@mikro-orm/migrations';

// Orders and stock holds (issue 13, reservations): an order records when its order-hold workflow was
// started, so a start lost between the commit and Temporal is found by the reconciler (a partial
// index keeps that search to the few orders still owed one).

export class Migration20261124192000 extends Migration {
  override name = 'Migration20261124192000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "orders" add "hold_workflow_started_at" timestamptz null;`);
    this.addSql(
      `create index "orders_hold_workflow_owed_index" on "orders" ("created_at") where "hold_expires_at" is not null and "hold_workflow_started_at" is null;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "orders_hold_workflow_owed_index";`);
    this.addSql(`alter table "orders" drop column "hold_workflow_started_at";`);
  }
}
