import { Migration } from '@mikro-orm/migrations';

// SMS campaigns: the campaigns table, and the recipient (contact) of each campaign message, unique per
// campaign so a campaign page written twice (a retried activity) inserts nothing the second time.
export class Migration20261122060000 extends Migration {
  override name = 'Migration20261122060000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "campaigns" ("id" serial primary key, "uid" varchar(40) not null, "account_id" int not null, "contact_group_id" int null, "name" varchar(160) not null, "message" text not null, "sender" varchar(64) null, "channel_id" int null, "channel_code" varchar(64) null, "status" text not null default 'draft', "scheduled_at" timestamptz null, "total_recipients" int not null default 0, "cursor" bigint not null default '0', "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`alter table "campaigns" add constraint "campaigns_uid_unique" unique ("uid");`);
    this.addSql(`create index "campaigns_account_id_id_index" on "campaigns" ("account_id", "id");`);

    this.addSql(`alter table "messages" add "contact_id" bigint null;`);
    this.addSql(`alter table "messages" add constraint "messages_campaign_id_contact_id_unique" unique ("campaign_id", "contact_id");`);

    this.addSql(
      `alter table "campaigns" add constraint "campaigns_contact_group_id_foreign" foreign key ("contact_group_id") references "contact_groups" ("id") on delete set null;`,
    );
    this.addSql(
      `alter table "campaigns" add constraint "campaigns_status_check" check ("status" in ('draft', 'scheduled', 'running', 'paused', 'completed', 'cancelled'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "campaigns" cascade;`);

    this.addSql(`alter table "messages" drop constraint "messages_campaign_id_contact_id_unique";`);
    this.addSql(`alter table "messages" drop column "contact_id";`);
  }
}
