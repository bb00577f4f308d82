import { Migration } from '@mikro-orm/migrations';

// Issue 12, feeds: the run a feed's failure count last took in (so a retried tally counts a run
// once), and a feed's runs by feed (the pull under way, the latest).
export class Migration20261124185000 extends Migration {
  override name = 'Migration20261124185000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "catalogue_feeds" add column "counted_sync_id" bigint null;`);
    this.addSql(`create index "catalogue_syncs_feed_id_id_index" on "catalogue_syncs" ("feed_id", "id");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop index "catalogue_syncs_feed_id_id_index";`);
    this.addSql(`alter table "catalogue_feeds" drop column "counted_sync_id";`);
  }
}
