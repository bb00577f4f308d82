import { Migration } from '@mikro-orm/migrations';

// Status moves rewrite a message in place (issue 31, docs/benchmarks.md "Cost per message"). A move
// that changes no indexed column is a heap-only (HOT) update: one small WAL record instead of a new
// row version plus an entry in every index. So no index names `status` any more, not even in a
// partial index's predicate:
// - the batch dispatcher's queue and claims move to a table of dispatch batches, one row per
//   statement that queued messages (queueing and claiming no longer write the messages at all);
// - the start-gap reconciler finds its messages by `workflow_pending`, which only the first move of
//   a workflow-mode message clears;
// - the account's messages filtered by status are read through (account_id, id);
// - a message found by its provider's id is found through message_provider_ids.

export class Migration20261129080000 extends Migration {
  override name = 'Migration20261129080000';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "message_dispatch_batches" ("id" bigserial primary key, "channel_type" text not null, "message_ids" bigint[] not null, "queued_at" timestamptz not null, "claim" varchar(120) null, "claimed_at" timestamptz null, "sent_at" timestamptz null, "swept_at" timestamptz null);`,
    );
    this.addSql(
      `alter table "message_dispatch_batches" add constraint "message_dispatch_batches_channel_type_check" check ("channel_type" in ('sms', 'whatsapp'));`,
    );
    this.addSql(`create index "message_dispatch_batches_claim_index" on "message_dispatch_batches" ("claim");`);
    this.addSql(
      `create index "message_dispatch_batches_unclaimed_index" on "message_dispatch_batches" ("channel_type", "id") where "claim" is null;`,
    );

    this.addSql(`alter table "messages" add column "workflow_pending" boolean null;`);
    this.addSql(
      `update "messages" set "workflow_pending" = true where "status" = 'queued' and "direction" = 'outbound' and "dispatch_mode" = 'workflow';`,
    );
    this.addSql(`create index "messages_workflow_pending_index" on "messages" ("id") where "workflow_pending";`);

    // What a batch dispatch had claimed goes back to the queue; the provider key (the uid) keeps a
    // send that did happen from happening twice.
    this.addSql(`update "messages" set "status" = 'queued' where "status" = 'processing' and "dispatch_mode" = 'batch';`);
    this.addSql(
      `insert into "message_dispatch_batches" ("channel_type", "message_ids", "queued_at") select "channel_type", array_agg("id" order by "id"), now() from "messages" where "status" = 'queued' and "dispatch_mode" = 'batch' group by "channel_type";`,
    );
    // Batch SMS sent in the last day and still without a final status: the silent sweep now reads
    // dispatch batches, so they get two closed ones (one to sweep, one already swept to poll).
    this.addSql(
      `insert into "message_dispatch_batches" ("channel_type", "message_ids", "queued_at", "claim", "claimed_at", "sent_at", "swept_at")
       select 'sms', array_agg("id" order by "id"), now(), 'migration', now(), now(), case when "status" = 'checking_delivery' then now() end
         from "messages" where "status" in ('sent', 'checking_delivery') and "dispatch_mode" = 'batch' and "channel_type" = 'sms' and "sent_at" > now() - interval '1 day'
        group by "status";`,
    );
    this.addSql(`drop index "messages_queued_index";`);
    this.addSql(`drop index "messages_batch_queue_index";`);
    this.addSql(`drop index "messages_claimed_index";`);
    this.addSql(`drop index "messages_silent_index";`);
    this.addSql(`drop index "messages_account_id_status_id_index";`);
    this.addSql(`alter table "messages" drop column "dispatch_claim";`);

    // Lookups by the provider's id go through their own table (every message that has one, so that
    // older SMS receipts without our uid are still found); a send's move then changes no indexed column.
    this.addSql(
      `create table "message_provider_ids" ("provider_message_id" varchar(191) not null, "message_id" bigint not null, primary key ("provider_message_id", "message_id"));`,
    );
    this.addSql(
      `insert into "message_provider_ids" ("provider_message_id", "message_id") select "gateway_message_id", "id" from "messages" where "gateway_message_id" is not null;`,
    );
    this.addSql(`drop index "messages_gateway_message_id_index";`);
    // Room on each page for a message's later versions: an update stays in place only when the new
    // version fits on the same page (new pages only; older ones keep what they have).
    this.addSql(`alter table "messages" set (fillfactor = 50);`);
  }

  override down(): void | Promise<void> {
    this.addSql(
      `create index "messages_gateway_message_id_index" on "messages" ("gateway_message_id") where "gateway_message_id" is not null;`,
    );
    this.addSql(`drop table if exists "message_provider_ids" cascade;`);
    this.addSql(`alter table "messages" reset (fillfactor);`);
    this.addSql(`alter table "messages" add column "dispatch_claim" varchar(120) null;`);
    this.addSql(`create index "messages_account_id_status_id_index" on "messages" ("account_id", "status", "id");`);
    this.addSql(
      `create index "messages_queued_index" on "messages" ("id") where "status" = 'queued' and "direction" = 'outbound' and "dispatch_mode" = 'workflow';`,
    );
    this.addSql(
      `create index "messages_batch_queue_index" on "messages" ("channel_type", "id") where "status" = 'queued' and "dispatch_mode" = 'batch';`,
    );
    this.addSql(`create index "messages_claimed_index" on "messages" ("dispatch_claim") where "status" = 'processing';`);
    this.addSql(`create index "messages_silent_index" on "messages" ("sent_at") where "status" = 'sent' and "dispatch_mode" = 'batch';`);
    this.addSql(`drop index "messages_workflow_pending_index";`);
    this.addSql(`alter table "messages" drop column "workflow_pending";`);
    this.addSql(`drop table if exists "message_dispatch_batches" cascade;`);
  }
}
