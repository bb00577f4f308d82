import type { EntityManager } from '@mikro-orm/postgresql';
import { onePlanned } from '../../entities/db.js';
import { groupCommit } from './group-commit.js';

// Writes that hold a hot row (a table's counters, an account's wallet) commit without waiting for
// their WAL to reach the disk (`set_config('synchronous_commit', 'off', true)` in the transaction),
// so the row is released as soon as the commit is recorded instead of after a flush (1–2 ms on a
// busy disk, during which every other write of that row would wait: one flush per write, in a
// line). Such a write is answered only after durableCommit: a transaction of its own whose commit is
// flushed as usual, and so flushes the WAL that holds the earlier commit too (WAL is flushed in
// order; concurrent writers share flushes). A 2xx therefore always means the write is on disk; until
// then a reader may see a write that a crash would take away, as one that never got its answer.
// Whatever acts on such a row outside the database (a provider call, a workflow) does so after a
// flushing commit of its own, which is later in the WAL, so it never acts on a write a crash could lose.

/** In a transaction's statement: its commit does not wait for the flush (see above). */
export const RELEASE_BEFORE_FLUSH = `set_config('synchronous_commit', 'off', true) is not null`;

/** A transaction with an id, so its commit is flushed. */
export const DURABLE_SQL = 'select pg_current_xact_id()::text as xid';

/**
 * DURABLE_SQL shared by the writes that finish together: one flushing commit, and one round trip,
 * for every write whose own commit came before it started (groupCommit queues a write that arrives
 * during a flush for the next one, whose commit is later than that write's). Per pool, since the
 * flush is the server's and any connection's commit makes it.
 */
const durableCommits = new WeakMap<object, (item: null) => Promise<void>>();
export function durableCommit(em: EntityManager): Promise<void> {
  const connection = em.getConnection();
  let commit = durableCommits.get(connection);
  if (!commit) {
    // Its own fork: never inside a caller's transaction.
    const own = em.fork();
    commit = groupCommit<null>(async () => void (await onePlanned(own, DURABLE_SQL)));
    durableCommits.set(connection, commit);
  }
  return commit(null);
}
