import type { EntityManager } from '@mikro-orm/postgresql';
import { accountTableIds, slugsLike } from './store/definitions.js';
import { userIdsOf } from '../account/index.js';
import { DomainError, validationFailed } from '../platform/errors.js';
import type { TableQuotas } from '../../domain/data/index.js';
import type { AccountFacts, Problems } from '../../domain/data/definition-rules.js';

// The side of the definition rules that needs the database or answers with a status: the facts a
// request's ids are checked against, the refusals (422 for problems, 402 past a quota, 409 for a
// slug taken) and free slugs. The pure rules are in domain/data/*-rules.ts.

/** Every problem of the request in one 422. */
export function throwIfAny(p: Problems) {
  if (p.any) throw validationFailed(p.errors);
}

export async function accountFacts(em: EntityManager, accountId: number, selfTableId?: string): Promise<AccountFacts> {
  const tableIds = new Set(await accountTableIds(em, accountId));
  const users = await userIdsOf(em, accountId);
  if (selfTableId) tableIds.add(selfTableId);
  return { accountId, tableIds, userIds: new Set(users) };
}

/** 402 when a table's columns or indexed columns pass its quotas. */
export function checkQuotas(quotas: TableQuotas, columns: readonly { indexed: boolean }[]) {
  const over = (quota: 'columns' | 'indexes', used: number) => {
    if (used <= quotas[quota]) return;
    throw new DomainError('quota', `The table may hold at most ${quotas[quota]} ${quota === 'columns' ? 'columns' : 'indexed columns'}.`, {
      code: 'quota_exceeded',
      reason: 'quota_exceeded',
      details: { quota, limit: quotas[quota], used },
    });
  };
  over('columns', columns.length);
  over('indexes', columns.filter((c) => c.indexed).length);
}

export async function freeSlug(em: EntityManager, of: 'tables' | 'groups', accountId: number, base: string): Promise<string> {
  const taken = new Set(await slugsLike(em, of, accountId, base));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}

export const slugTaken = (what: 'table' | 'group', slug: string) =>
  new DomainError('conflict', `The account already has a ${what} with the slug ${slug}.`, { code: 'conflict', field: 'slug' });

/** A guard's refusal keeps its message, said on the request's field (the set or the column flag). */
export function nameField(err: unknown, field: string): unknown {
  if (!(err instanceof DomainError) || err.kind !== 'invalid') return err;
  return validationFailed({ [field]: [err.message], ...err.detail.errors }, err.message);
}
