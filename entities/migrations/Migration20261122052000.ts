import { Migration } from '@mikro-orm/migrations';

// Batch dispatch: immediate sends that the API does not hand to a per-message workflow (admission
// control under load) are claimed from this queue by the outbound dispatcher workflow.
export class Migration20261122052000 extends Migration {
  override name = 'Migration20261122052000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "messages" add "dispatch_mode" varchar(16) not null default 'workflow';`);
    // The dispatcher iteration that claimed a message: a retried claim returns the same messages.
    this.addSql(`alter table "messages" add "dispatch_claim" varchar(120) null;`);
    this.addSql(`create index "messages_dispatch_claim_index" on "messages" ("dispatch_claim");`);
    this.addSql(
      `create index "messages_batch_queue_index" on "messages" ("channel_type", "id") where "status" = 'queued' and "dispatch_mode" = 'batch';`,
    );
    this.addSql(`create index "messages_silent_index" on "messages" ("sent_at") where "status" = 'sent' and "dispatch_mode" = 'batch';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_silent_index";`);
    this.addSql(`drop index "messages_batch_queue_index";`);
    this.addSql(`alter table "messages" drop column "dispatch_mode";`);
    this.addSql(`alter table "messages" drop column "dispatch_claim";`);
  }
}
