import { fileURLToPath } from 'node:url';
import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './index.js';

const migrationsPath = fileURLToPath(new URL('./migrations', import.meta.url));

/**
 * The pg driver's own connection settings (config.ts parseDatabaseUrl: TLS as sslmode asks,
 * application_name, timeouts). MikroORM reads only host, port, user, password and database from
 * clientUrl; these reach the pg Pool through driverOptions, which take precedence over what it read.
 */
export type PgDriverOptions = Record<string, unknown>;

export function ormConfig(databaseUrl: string, poolMax = 10, pg: PgDriverOptions = {}) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    driverOptions: { ...pg },
    // Schema changes only ever come from committed migrations, never from entity sync at run time.
    migrations: { path: migrationsPath, glob: '*.ts', transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // Tables kept by hand-written SQL in migrations (the unlogged rate-limit counters).
    schemaGenerator: { skipTables: ['rate_limit_windows'] },
    debug: false,
  });
}

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, poolMax = 10, pg: PgDriverOptions = {}): Promise<MikroORM> {
  return MikroORM.init(ormConfig(databaseUrl, poolMax, pg));
}

export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
