import { Migration } from '@mikro-orm/migrations';

export class Migration20261122034448 extends Migration {
  override name = 'Migration20261122034448';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "conversation_windows" ("account_id" int not null, "channel_type" varchar(16) not null, "business_number" varchar(64) not null, "customer" varchar(64) not null, "last_inbound_at" timestamptz not null, primary key ("account_id", "channel_type", "business_number", "customer"));`,
    );

    this.addSql(
      `create table "pending_receipts" ("id" bigserial primary key, "provider_message_id" varchar(191) not null, "status" varchar(32) not null, "error_message" text null, "received_at" timestamptz not null);`,
    );
    this.addSql(`create index "pending_receipts_provider_message_id_index" on "pending_receipts" ("provider_message_id");`);

    this.addSql(`alter table "messages" add "provider_request" jsonb null;`);
    this.addSql(`create index "messages_account_id_status_id_index" on "messages" ("account_id", "status", "id");`);
    this.addSql(`create index "messages_queued_index" on "messages" ("id") where "status" = 'queued' and "direction" = 'outbound';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "conversation_windows" cascade;`);
    this.addSql(`drop table if exists "pending_receipts" cascade;`);

    this.addSql(`drop index "messages_account_id_status_id_index";`);
    this.addSql(`drop index "messages_queued_index";`);
    this.addSql(`alter table "messages" drop column "provider_request";`);
  }
}
