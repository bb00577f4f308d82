import { fileURLToPath } from 'node:url';
import { MikroORM, defineConfig } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { entities } from './index.js';

const migrationsPath = fileURLToPath(new URL('./migrations', import.meta.url));

export function ormConfig(databaseUrl: string, poolMax = 10) {
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax },
    // Schema changes only ever come from committed migrations, never from entity sync at run time.
    migrations: { path: migrationsPath, glob: '*.ts', transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // Tables kept by hand-written SQL in migrations (the unlogged rate-limit counters).
    schemaGenerator: { skipTables: ['rate_limit_windows'] },
    debug: false,
  });
}

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init(ormConfig(databaseUrl, poolMax));
}

export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
