import { Migration } from '@mikro-orm/migrations';

export class Migration20261124210000 extends Migration {
  override name = 'Migration20261124210000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "chat_groups" ("id" bigserial primary key, "account_id" int not null, "sender_phone_number_id" varchar(64) not null, "channel_id" int null, "provider_group_id" varchar(128) null, "provider_request_id" varchar(128) null, "subject" varchar(128) not null, "description" varchar(2048) null, "join_approval_mode" text not null default 'auto_approve', "status" text not null default 'creating', "invite_link" varchar(255) null, "invite_template" varchar(191) null, "invitees" jsonb not null, "failure_reason" text null, "last_participant_message_at" timestamptz null, "deleted_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "chat_groups_account_id_status_id_index" on "chat_groups" ("account_id", "status", "id");`);
    this.addSql(`alter table "chat_groups" add constraint "chat_groups_provider_group_id_unique" unique ("provider_group_id");`);
    this.addSql(`alter table "chat_groups" add constraint "chat_groups_provider_request_id_unique" unique ("provider_request_id");`);

    this.addSql(
      `create table "chat_group_join_requests" ("id" bigserial primary key, "account_id" int not null, "group_id" bigint not null, "join_request_id" varchar(128) not null, "wa_id" varchar(32) not null, "status" text not null default 'pending', "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(
      `alter table "chat_group_join_requests" add constraint "chat_group_join_requests_group_id_join_request_id_unique" unique ("group_id", "join_request_id");`,
    );

    this.addSql(
      `create table "chat_group_participants" ("id" bigserial primary key, "account_id" int not null, "group_id" bigint not null, "wa_id" varchar(32) not null, "status" text not null, "invite_message_uid" varchar(32) null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(
      `alter table "chat_group_participants" add constraint "chat_group_participants_group_id_wa_id_unique" unique ("group_id", "wa_id");`,
    );

    this.addSql(`alter table "messages" add "chat_group_id" bigint null;`);
    this.addSql(`create index "messages_chat_group_index" on "messages" ("chat_group_id", "id") where "chat_group_id" is not null;`);

    this.addSql(
      `alter table "chat_groups" add constraint "chat_groups_join_approval_mode_check" check ("join_approval_mode" in ('auto_approve', 'approval_required'));`,
    );
    this.addSql(
      `alter table "chat_groups" add constraint "chat_groups_status_check" check ("status" in ('creating', 'active', 'suspended', 'deleting', 'deleted', 'failed'));`,
    );

    this.addSql(
      `alter table "chat_group_join_requests" add constraint "chat_group_join_requests_group_id_foreign" foreign key ("group_id") references "chat_groups" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "chat_group_join_requests" add constraint "chat_group_join_requests_status_check" check ("status" in ('pending', 'approved', 'rejected', 'revoked'));`,
    );

    this.addSql(
      `alter table "chat_group_participants" add constraint "chat_group_participants_group_id_foreign" foreign key ("group_id") references "chat_groups" ("id") on delete cascade;`,
    );
    this.addSql(
      `alter table "chat_group_participants" add constraint "chat_group_participants_status_check" check ("status" in ('invited', 'joined', 'left', 'removed'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "chat_group_join_requests" drop constraint "chat_group_join_requests_group_id_foreign";`);
    this.addSql(`alter table "chat_group_participants" drop constraint "chat_group_participants_group_id_foreign";`);

    this.addSql(`drop table if exists "chat_groups" cascade;`);
    this.addSql(`drop table if exists "chat_group_join_requests" cascade;`);
    this.addSql(`drop table if exists "chat_group_participants" cascade;`);

    this.addSql(`drop index "messages_chat_group_index";`);
    this.addSql(`alter table "messages" drop column "chat_group_id";`);
  }
}
