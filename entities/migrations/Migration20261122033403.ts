import { Migration } from '@mikro-orm/migrations';

export class Migration20261122033403 extends Migration {
  override name = 'Migration20261122033403';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "accounts" ("id" serial primary key, "uid" varchar(40) not null, "name" varchar(160) not null, "status" text not null default 'active', "wallet_balance" numeric(16,4) not null default '0', "currency" varchar(3) not null default 'USD', "billing_mode" text not null default 'prepaid', "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`alter table "accounts" add constraint "accounts_uid_unique" unique ("uid");`);

    this.addSql(
      `create table "api_keys" ("id" serial primary key, "account_id" int not null, "user_id" int null, "kind" text not null default 'rest', "name" varchar(160) not null, "token_hash" varchar(64) not null, "token_hint" varchar(16) not null, "expires_at" timestamptz null, "revoked_at" timestamptz null, "last_used_at" timestamptz null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "api_keys_account_id_index" on "api_keys" ("account_id");`);
    this.addSql(`alter table "api_keys" add constraint "api_keys_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "blacklist" ("id" serial primary key, "account_id" int not null, "channel_id" int null, "phone" varchar(32) not null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "blacklist_account_id_phone_index" on "blacklist" ("account_id", "phone");`);

    this.addSql(
      `create table "channels" ("id" serial primary key, "account_id" int null, "channel_type" text not null, "code" varchar(64) not null, "provider" varchar(32) not null, "is_default" boolean not null default false, "active" boolean not null default true, "config" jsonb null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "channels_account_id_index" on "channels" ("account_id");`);

    this.addSql(
      `create table "messages" ("id" bigserial primary key, "uid" varchar(40) not null, "account_id" int not null, "direction" text not null, "channel_type" text not null, "channel_id" int null, "channel_code" varchar(64) null, "sender" varchar(64) null, "recipient" varchar(191) not null, "body" text not null, "status" text not null, "media_url" text null, "media_type" varchar(32) null, "gateway_message_id" varchar(191) null, "error_message" text null, "metadata" jsonb null, "template_params" jsonb null, "segments" int not null default 1, "encoding" varchar(8) not null default 'GSM-7', "campaign_id" int null, "scheduled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "sent_at" timestamptz null, "delivered_at" timestamptz null, "read_at" timestamptz null);`,
    );
    this.addSql(`alter table "messages" add constraint "messages_uid_unique" unique ("uid");`);
    this.addSql(`create index "messages_gateway_message_id_index" on "messages" ("gateway_message_id");`);
    this.addSql(`create index "messages_account_id_id_index" on "messages" ("account_id", "id");`);

    this.addSql(
      `create table "phone_numbers" ("id" serial primary key, "account_id" int not null, "channel_id" int null, "number" varchar(32) not null, "capabilities" jsonb not null, "released" boolean not null default false, "provider_phone_number_id" varchar(64) null, "business_account_id" varchar(64) null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "phone_numbers_account_id_index" on "phone_numbers" ("account_id");`);

    this.addSql(
      `create table "sender_ids" ("id" serial primary key, "account_id" int not null, "channel_id" int null, "value" varchar(64) not null, "approval_status" text not null default 'pending', "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "sender_ids_account_id_index" on "sender_ids" ("account_id");`);

    this.addSql(
      `create table "short_codes" ("id" serial primary key, "account_id" int not null, "channel_id" int null, "code" varchar(16) not null, "assignment_status" text not null default 'active', "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "short_codes_account_id_index" on "short_codes" ("account_id");`);

    this.addSql(
      `create table "users" ("id" serial primary key, "account_id" int not null, "email" varchar(254) not null, "name" varchar(160) not null, "permissions" jsonb not null, "active" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "users_account_id_index" on "users" ("account_id");`);
    this.addSql(`alter table "users" add constraint "users_account_id_email_unique" unique ("account_id", "email");`);

    // Fixed-window request counters shared by every API process. Unlogged: losing counts in a
    // database crash only forgives a minute of traffic, and it saves a WAL write per request.
    this.addSql(
      `create unlogged table "rate_limit_windows" ("bucket" varchar(80) not null, "window_start" bigint not null, "count" int not null default 0, primary key ("bucket", "window_start"));`,
    );
    // The system default SMS route, used when an account has none of its own.
    this.addSql(
      `insert into "channels" ("account_id", "channel_type", "code", "provider", "is_default", "active", "created_at") values (null, 'sms', 'system-sms', 'sms-gateway', true, true, now());`,
    );

    this.addSql(`alter table "accounts" add constraint "accounts_status_check" check ("status" in ('active', 'suspended'));`);
    this.addSql(`alter table "accounts" add constraint "accounts_billing_mode_check" check ("billing_mode" in ('prepaid', 'postpaid'));`);

    this.addSql(`alter table "api_keys" add constraint "api_keys_kind_check" check ("kind" in ('rest', 'mcp'));`);

    this.addSql(`alter table "channels" add constraint "channels_channel_type_check" check ("channel_type" in ('sms', 'whatsapp'));`);

    this.addSql(`alter table "messages" add constraint "messages_direction_check" check ("direction" in ('inbound', 'outbound'));`);
    this.addSql(`alter table "messages" add constraint "messages_channel_type_check" check ("channel_type" in ('sms', 'whatsapp'));`);
    this.addSql(
      `alter table "messages" add constraint "messages_status_check" check ("status" in ('queued', 'processing', 'sent', 'checking_delivery', 'delivered', 'read', 'failed', 'received'));`,
    );

    this.addSql(
      `alter table "sender_ids" add constraint "sender_ids_approval_status_check" check ("approval_status" in ('pending', 'approved', 'rejected'));`,
    );

    this.addSql(
      `alter table "short_codes" add constraint "short_codes_assignment_status_check" check ("assignment_status" in ('active', 'inactive'));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "rate_limit_windows" cascade;`);
    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "api_keys" cascade;`);
    this.addSql(`drop table if exists "blacklist" cascade;`);
    this.addSql(`drop table if exists "channels" cascade;`);
    this.addSql(`drop table if exists "messages" cascade;`);
    this.addSql(`drop table if exists "phone_numbers" cascade;`);
    this.addSql(`drop table if exists "sender_ids" cascade;`);
    this.addSql(`drop table if exists "short_codes" cascade;`);
    this.addSql(`drop table if exists "users" cascade;`);
  }
}
