import { Migration } from '@mikro-orm/migrations';

// A chat message's channel code is `whatsapp:` followed by the provider's phone-number id, which may
// be 64 characters: the column must hold 73, or a send from such a number fails after its checks.
export class Migration20261122091100 extends Migration {
  override name = 'Migration20261122091100';

  override up(): void | Promise<void> {
    this.addSql(`alter table "messages" alter column "channel_code" type varchar(80) using ("channel_code"::varchar(80));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "messages" alter column "channel_code" type varchar(64) using ("channel_code"::varchar(64));`);
  }
}
