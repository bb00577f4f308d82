import { Migration } from '@mikro-orm/migrations';

// Cheaper status moves: every move of a message rewrites an entry in each of its full indexes.
// The provider-id and claim indexes only serve rows that have a provider id or are claimed, so
// they become partial; the claim index also serves the sweep of claims left behind.
export class Migration20261122070000 extends Migration {
  override name = 'Migration20261122070000';

  override up(): void | Promise<void> {
    this.addSql(`drop index "messages_gateway_message_id_index";`);
    this.addSql(
      `create index "messages_gateway_message_id_index" on "messages" ("gateway_message_id") where "gateway_message_id" is not null;`,
    );
    this.addSql(`drop index "messages_dispatch_claim_index";`);
    this.addSql(`create index "messages_claimed_index" on "messages" ("dispatch_claim") where "status" = 'processing';`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "messages_claimed_index";`);
    this.addSql(`create index "messages_dispatch_claim_index" on "messages" ("dispatch_claim");`);
    this.addSql(`drop index "messages_gateway_message_id_index";`);
    this.addSql(`create index "messages_gateway_message_id_index" on "messages" ("gateway_message_id");`);
  }
}
