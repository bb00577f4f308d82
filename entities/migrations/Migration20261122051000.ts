import { Migration } from '@mikro-orm/migrations';

// Webhooks (endpoints, the event outbox, deliveries and their attempts) and automations (business
// event log, subscriptions, operation definitions and runs, schedules). Hand-written: another
// migration lands beside it at the same time.
export class Migration20261122051000 extends Migration {
  override name = 'Migration20261122051000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "webhook_endpoints" ("id" serial primary key, "account_id" int not null, "url" text not null, "description" varchar(255) null, "events" jsonb not null, "secret" varchar(100) not null, "previous_secret" varchar(100) null, "previous_secret_expires_at" timestamptz null, "status" text not null default 'active', "consecutive_failures" int not null default 0, "failing_since" timestamptz null, "disabled_reason" text null, "disabled_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(`create index "webhook_endpoints_account_id_index" on "webhook_endpoints" ("account_id");`);
    this.addSql(
      `alter table "webhook_endpoints" add constraint "webhook_endpoints_status_check" check ("status" in ('active', 'disabled'));`,
    );

    this.addSql(
      `create table "events" ("id" bigserial primary key, "event_id" varchar(40) not null, "account_id" int not null, "kind" varchar(64) not null, "payload" jsonb not null, "occurred_at" timestamptz not null, "dispatched_at" timestamptz null);`,
    );
    this.addSql(`alter table "events" add constraint "events_event_id_unique" unique ("event_id");`);
    this.addSql(`create index "events_account_id_id_index" on "events" ("account_id", "id");`);
    this.addSql(`create index "events_undispatched_index" on "events" ("id") where "dispatched_at" is null;`);

    this.addSql(
      `create table "webhook_deliveries" ("id" bigserial primary key, "account_id" int not null, "workflow_id" varchar(255) not null, "event_id" varchar(64) not null, "target_type" text not null, "target_id" int not null, "status" text not null default 'pending', "attempts" int not null default 0, "last_status_code" int null, "last_error" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "completed_at" timestamptz null);`,
    );
    this.addSql(`alter table "webhook_deliveries" add constraint "webhook_deliveries_workflow_id_unique" unique ("workflow_id");`);
    this.addSql(`create index "webhook_deliveries_event_id_index" on "webhook_deliveries" ("event_id");`);
    this.addSql(
      `create index "webhook_deliveries_account_id_target_type_target_id_id_index" on "webhook_deliveries" ("account_id", "target_type", "target_id", "id");`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_target_type_check" check ("target_type" in ('endpoint', 'subscription'));`,
    );
    this.addSql(
      `alter table "webhook_deliveries" add constraint "webhook_deliveries_status_check" check ("status" in ('pending', 'succeeded', 'failed'));`,
    );

    this.addSql(
      `create table "delivery_attempts" ("id" bigserial primary key, "delivery_id" bigint not null, "attempt" int not null, "attempted_at" timestamptz not null, "status_code" int null, "latency_ms" int not null, "error" text null, "response_excerpt" text null);`,
    );
    this.addSql(
      `alter table "delivery_attempts" add constraint "delivery_attempts_delivery_id_attempt_unique" unique ("delivery_id", "attempt");`,
    );

    this.addSql(
      `create table "business_events" ("id" uuid not null, "seq" bigserial, "account_id" int not null, "type" varchar(100) not null, "data" jsonb not null, "live" boolean not null default true, "source" varchar(64) null, "occurred_at" timestamptz not null, "dispatched_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`alter table "business_events" add constraint "business_events_seq_unique" unique ("seq");`);
    this.addSql(`create index "business_events_account_id_seq_index" on "business_events" ("account_id", "seq");`);
    this.addSql(`create index "business_events_undispatched_index" on "business_events" ("seq") where "dispatched_at" is null;`);

    this.addSql(
      `create table "automation_subscriptions" ("id" serial primary key, "account_id" int not null, "event_type" varchar(100) not null, "target_url" text not null, "secret" varchar(100) not null, "description" varchar(255) null, "active" boolean not null default true, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "automation_subscriptions_account_id_index" on "automation_subscriptions" ("account_id");`);

    this.addSql(
      `create table "operation_definitions" ("id" serial primary key, "account_id" int not null, "name" varchar(64) not null, "kind" text not null, "config" jsonb not null, "description" varchar(255) null, "active" boolean not null default true, "created_at" timestamptz not null, "updated_at" timestamptz not null);`,
    );
    this.addSql(
      `alter table "operation_definitions" add constraint "operation_definitions_account_id_name_unique" unique ("account_id", "name");`,
    );
    this.addSql(
      `alter table "operation_definitions" add constraint "operation_definitions_kind_check" check ("kind" in ('send_sms', 'emit_business_event'));`,
    );

    this.addSql(
      `create table "operation_runs" ("id" uuid not null, "account_id" int not null, "operation_id" int not null, "operation_name" varchar(64) not null, "input" jsonb not null, "status" text not null default 'queued', "source" varchar(64) not null, "result" jsonb null, "error" text null, "created_at" timestamptz not null, "finished_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "operation_runs_account_id_created_at_index" on "operation_runs" ("account_id", "created_at");`);
    this.addSql(`create index "operation_runs_queued_index" on "operation_runs" ("created_at") where "status" = 'queued';`);
    this.addSql(
      `alter table "operation_runs" add constraint "operation_runs_status_check" check ("status" in ('queued', 'running', 'succeeded', 'failed'));`,
    );

    this.addSql(
      `create table "automation_schedules" ("id" uuid not null, "account_id" int not null, "name" varchar(160) not null, "operation_name" varchar(64) not null, "input" jsonb not null, "every_seconds" int not null, "active" boolean not null default true, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "automation_schedules_account_id_index" on "automation_schedules" ("account_id");`);
  }

  override down(): void | Promise<void> {
    for (const t of [
      'webhook_endpoints',
      'events',
      'webhook_deliveries',
      'delivery_attempts',
      'business_events',
      'automation_subscriptions',
      'operation_definitions',
      'operation_runs',
      'automation_schedules',
    ]) {
      this.addSql(`drop table if exists "${t}" cascade;`);
    }
  }
}
