import { Migration } from '@mikro-orm/migrations';

// The MCP authorization server (issue 27): oidc-provider's stored objects, keyed by their kind and
// the SHA-256 of their ids (entities/oauth.ts, services/oauth/adapter.ts, docs/security.md).

export class Migration20261127222858 extends Migration {
  override name = 'Migration20261127222858';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "oauth_records" ("model" varchar(40) not null, "id_hash" varchar(64) not null, "payload" jsonb not null, "grant_id" varchar(64) null, "uid_hash" varchar(64) null, "client_id" text null, "account_id" int null, "user_id" int null, "expires_at" timestamptz null, "consumed_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("model", "id_hash"));`,
    );
    this.addSql(`create index "oauth_records_grant_index" on "oauth_records" ("grant_id") where "grant_id" is not null;`);
    this.addSql(`create index "oauth_records_uid_index" on "oauth_records" ("model", "uid_hash") where "uid_hash" is not null;`);
    this.addSql(`create index "oauth_records_account_index" on "oauth_records" ("account_id", "model");`);
    this.addSql(`create index "oauth_records_expires_index" on "oauth_records" ("expires_at");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "oauth_records" cascade;`);
  }
}
