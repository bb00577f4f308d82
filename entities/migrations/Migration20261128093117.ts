import { Migration } from '@mikro-orm/migrations';

// Payments hardening (issue 26, docs/payments.md): the push a worker may have died in the middle of
// (pushes_started, written before the call), the workflow a payment is still owed (workflow_started_at,
// found by the reconciler), an index for the callback's lookup by reference alone, and
// ledger_entries made append-only by the database (a trigger refuses every UPDATE and DELETE).

export class Migration20261128093117 extends Migration {
  override name = 'Migration20261128093117';

  override up(): void | Promise<void> {
    this.addSql(`alter table "payments" add "pushes_started" int not null default 0, add "workflow_started_at" timestamptz null;`);
    // Payments from before this column were started by their request (or stayed draft when that
    // failed): the open ones are left owed, so the reconciler starts what never started and finds the
    // rest running (the id policy refuses a second start); the others owe nothing.
    this.addSql(`update "payments" set "workflow_started_at" = "created_at" where "is_refund" or "state" not in ('draft', 'pending');`);
    this.addSql(
      `create index "payments_workflow_owed_index" on "payments" ("created_at") where "workflow_started_at" is null and "state" in ('draft', 'pending') and not "is_refund";`,
    );
    this.addSql(`create index "payments_reference_index" on "payments" ("reference");`);

    this.addSql(`create or replace function "ledger_entries_append_only"() returns trigger language plpgsql as $$
begin
  raise exception 'ledger_entries is append-only: % refused', tg_op
    using hint = 'A correction is a new entry, never a change to a written one.';
end
$$;`);
    this.addSql(
      `create trigger "ledger_entries_append_only" before update or delete on "ledger_entries" for each row execute function "ledger_entries_append_only"();`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop trigger if exists "ledger_entries_append_only" on "ledger_entries";`);
    this.addSql(`drop function if exists "ledger_entries_append_only"();`);
    this.addSql(`drop index if exists "payments_reference_index";`);
    this.addSql(`drop index if exists "payments_workflow_owed_index";`);
    this.addSql(`alter table "payments" drop column "workflow_started_at", drop column "pushes_started";`);
  }
}
