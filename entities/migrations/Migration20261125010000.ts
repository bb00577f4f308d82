import { Migration } from '@mikro-orm/migrations';

// Webhook first attempts in batches (docs/webhooks.md): the dispatcher's lease on a queued delivery,
// and the small index of deliveries still waiting for their first attempt.
export class Migration20261125010000 extends Migration {
  override name = 'Migration20261125010000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "webhook_deliveries" add column "claimed_until" timestamptz null;`);
    this.addSql(
      `create index "webhook_deliveries_first_attempt_index" on "webhook_deliveries" ("id") where "status" = 'pending' and "attempts" = 0;`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "webhook_deliveries_first_attempt_index";`);
    this.addSql(`alter table "webhook_deliveries" drop column "claimed_until";`);
  }
}
