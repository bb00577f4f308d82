import { Migration } from '@mikro-orm/migrations';

// Data tables' `q` search runs on trigram indexes (notes/commerce-and-data-tables.md §4.5). pg_trgm is
// a trusted extension (PostgreSQL 13+): the database owner may create it without superuser rights.

export class Migration20261124200100 extends Migration {
  override name = 'Migration20261124200100';

  override up(): void | Promise<void> {
    this.addSql(`create extension if not exists pg_trgm;`);
  }

  override down(): void | Promise<void> {
    // Left in place: other objects (the tables' search indexes) may use it.
  }
}
