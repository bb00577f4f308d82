import { Migration } from '@mikro-orm/migrations';

// Refunds are owed their workflow too (docs/payments.md, The reconciler): a refund whose start after
// the commit was lost stays in draft until the reconciler starts it. The owed index now holds refunds
// (the reconciler's query keeps only those in draft). Refunds past draft were sent by a workflow and
// owe none: marked, so the index keeps to the few still owed. And reconciliation finds a statement
// line's payment by its M-Pesa receipt (docs/payments.md, The report): an index on provider_receipt.

export class Migration20261128140000 extends Migration {
  override name = 'Migration20261128140000';

  override up(): void | Promise<void> {
    this.addSql(
      `update "payments" set "workflow_started_at" = "created_at" where "is_refund" and "workflow_started_at" is null and "state" <> 'draft';`,
    );
    this.addSql(`drop index if exists "payments_workflow_owed_index";`);
    this.addSql(
      `create index "payments_workflow_owed_index" on "payments" ("created_at") where "workflow_started_at" is null and "state" in ('draft', 'pending');`,
    );
    this.addSql(`create index "payments_provider_receipt_index" on "payments" ("provider_receipt") where "provider_receipt" is not null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index if exists "payments_provider_receipt_index";`);
    this.addSql(`drop index if exists "payments_workflow_owed_index";`);
    this.addSql(
      `create index "payments_workflow_owed_index" on "payments" ("created_at") where "workflow_started_at" is null and "state" in ('draft', 'pending') and not "is_refund";`,
    );
  }
}
