import { fileURLToPath } from 'node:url';
import Pg from 'pg';
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
  // The pool's own option (config.ts poolIdleMillis), when the process sets it; pg's default otherwise.
  const idle = typeof pg.idleTimeoutMillis === 'number' ? { idleTimeoutMillis: pg.idleTimeoutMillis } : {};
  return defineConfig({
    clientUrl: databaseUrl,
    entities,
    extensions: [Migrator],
    pool: { min: 0, max: poolMax, ...idle },
    // A statement the driver gave up on (query_timeout) is still on its connection, and everything
    // after it (the transaction's rollback, the next request's statements) would queue behind it:
    // that connection is dropped instead, so they fail at once and the pool opens a fresh one.
    driverOptions: { ...pg, ...(pg.query_timeout ? { onPoolCreated: (pool: Pg.Pool) => pool.on('connect', dropOnReadTimeout) } : {}) },
    // Schema changes only ever come from committed migrations, never from entity sync at run time.
    migrations: { path: migrationsPath, glob: '*.ts', transactional: true, allOrNothing: true, snapshot: false, silent: true },
    // Tables kept by hand-written SQL in migrations (the unlogged rate-limit counters).
    schemaGenerator: { skipTables: ['rate_limit_windows'] },
    debug: false,
  });
}

/** pg's message when query_timeout passes without an answer (pg/lib/client.js). */
export const READ_TIMEOUT_MESSAGE = 'Query read timeout';

function dropOnReadTimeout(client: Pg.PoolClient): void {
  // The pool's clients are pg's own Client (pg-pool is handed it), which holds the socket.
  if (!(client instanceof Pg.Client)) return;
  const query = client.query;
  // pg's query has a dozen overloads (promise, callback, submittable); this wrapper only watches the promise form.
  Object.defineProperty(client, 'query', {
    configurable: true,
    writable: true,
    value: (...args: unknown[]): unknown => {
      const answer: unknown = Reflect.apply(query, client, args);
      if (answer instanceof Promise)
        answer.catch((err: unknown) => {
          if (err instanceof Error && err.message === READ_TIMEOUT_MESSAGE) client.connection.stream.destroy();
        });
      return answer;
    },
  });
}

export type Orm = MikroORM;

export async function openOrm(databaseUrl: string, poolMax = 10, pg: PgDriverOptions = {}): Promise<MikroORM> {
  return MikroORM.init(ormConfig(databaseUrl, poolMax, pg));
}

export async function migrate(orm: MikroORM): Promise<void> {
  await orm.migrator.up();
}
