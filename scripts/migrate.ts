// `npm run migrate`: applies the pending migrations (entities/migrations) to DATABASE_URL, then exits.
// Run once per release before the new APIs and workers start (docs/deploy.md); with nothing pending it
// changes nothing. Each migration runs in its own transaction and a failed run applies none of the
// pending ones (allOrNothing, entities/orm.ts), so a failure leaves the schema as it was.
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openOrm } from '../entities/orm.js';

const config = loadConfig();
const log = createLogger('migrate', config.logLevel);
const { database } = config;
log.info({ host: database.host, port: database.port, database: database.database, tls: database.ssl !== false }, 'migrating');
const orm = await openOrm(config.databaseUrl, 2, { ...database });
try {
  const pending = await orm.migrator.getPending();
  const applied = await orm.migrator.up();
  log.info(
    { applied: applied.map((m) => m.name), pendingBefore: pending.length },
    applied.length ? 'migrations applied' : 'schema up to date',
  );
} catch (err) {
  log.error({ err }, 'migration failed');
  process.exitCode = 1;
} finally {
  await orm.close();
}
