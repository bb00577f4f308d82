import { Migration } from '@mikro-orm/migrations';

// The start-gap reconciler only looks for queued messages sent through their own workflow, so its
// index leaves out batch messages: a campaign's records no longer add an entry they never use.
export class Migration20261122080000 extends Migration {
  override name = 'Migration20261122080000';

  override up(): void | Promise<void> {
    this.addSql(`drop index "messages_queued_index";`);
    this.addSql(
      `create index "messages_queued_index" on "messages" ("id") where "status" = 'queued' and "direction" = 'outbound' and "dispatch_mode" = 'workflow';`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_queued_index";`);
    this.addSql(`create index "messages_queued_index" on "messages" ("id") where "status" = 'queued' and "direction" = 'outbound';`);
  }
}
