import type { EntityManager } from '@mikro-orm/postgresql';
import { one } from '../../entities/db.js';
import type { Admission, AdmissionRow } from './context.js';
import { RELEASE_BEFORE_FLUSH } from './durable-commit.js';

/**
 * Makes a pending admission (RequestContext.admission) in a statement of its own, for a handler that
 * must write through a path its one statement does not cover: the request is then authenticated and
 * counted before anything is written, as by the door's plain authentication (settle throws its
 * refusals). The count needs no flush.
 */
export async function admitNow(em: EntityManager, admission: Admission): Promise<void> {
  const { sql, params } = admission.sql();
  const row = await one<AdmissionRow>(em, `with ${sql} select * from adm where ${RELEASE_BEFORE_FLUSH}`, params);
  admission.settle(row!);
}
