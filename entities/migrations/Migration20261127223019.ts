import { Migration } from '@mikro-orm/migrations';

// People's sign-in on the MCP authorization server (issue 27): passwords (scrypt) and invitation
// links, kept as hashes (entities/oauth.ts, services/oauth/passwords.ts, invites.ts).

export class Migration20261127223019 extends Migration {
  override name = 'Migration20261127223019';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "user_invites" ("id" serial primary key, "account_id" int not null, "user_id" int not null, "token_hash" varchar(64) not null, "expires_at" timestamptz not null, "used_at" timestamptz null, "created_at" timestamptz not null);`,
    );
    this.addSql(`create index "user_invites_user_id_index" on "user_invites" ("user_id");`);
    this.addSql(`alter table "user_invites" add constraint "user_invites_token_hash_unique" unique ("token_hash");`);

    this.addSql(
      `create table "user_passwords" ("user_id" int not null, "account_id" int not null, "password_hash" varchar(255) not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("user_id"));`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "user_invites" cascade;`);
    this.addSql(`drop table if exists "user_passwords" cascade;`);
  }
}
