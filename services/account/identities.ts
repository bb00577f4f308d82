import type { EntityManager } from '@mikro-orm/postgresql';
import { many, one } from '../../entities/db.js';
import { notFound } from '../platform/errors.js';

// Sending identities and routes of an account, kept by the operator. Each kind has its own state:
// alphanumeric ids an approval, numbers capabilities and a released flag, short codes an assignment.
export const IDENTITY_TABLES = {
  'sender-ids': { table: 'sender_ids', columns: ['value', 'channel_id', 'approval_status'] },
  'phone-numbers': {
    table: 'phone_numbers',
    columns: ['number', 'channel_id', 'capabilities', 'released', 'provider_phone_number_id', 'business_account_id'],
  },
  'short-codes': { table: 'short_codes', columns: ['code', 'channel_id', 'assignment_status'] },
  channels: { table: 'channels', columns: ['channel_type', 'code', 'provider', 'is_default', 'active', 'config'] },
  blacklist: { table: 'blacklist', columns: ['phone', 'channel_id'] },
} as const;

export type IdentityKind = keyof typeof IDENTITY_TABLES;

const encode = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);

export async function addIdentity(em: EntityManager, kind: IdentityKind, accountId: number, input: Record<string, unknown>) {
  const { table, columns } = IDENTITY_TABLES[kind];
  const cols = columns.filter((c) => input[c] !== undefined);
  return em.transactional(async (tx) => {
    // One default route per account and channel type: a new default replaces the old one.
    if (kind === 'channels' && input.is_default === true) {
      await tx.execute('update channels set is_default = false where account_id = ? and channel_type = ?', [accountId, input.channel_type]);
    }
    return one<Record<string, unknown>>(
      tx,
      `insert into ${table} (account_id, ${cols.join(', ')}, created_at) values (?, ${cols.map(() => '?').join(', ')}, now()) returning *`,
      [accountId, ...cols.map((c) => encode(input[c]))],
    );
  });
}

export async function updateIdentity(em: EntityManager, kind: IdentityKind, accountId: number, id: number, input: Record<string, unknown>) {
  const { table, columns } = IDENTITY_TABLES[kind];
  const cols = columns.filter((c) => input[c] !== undefined);
  if (!cols.length) {
    const row = await one<Record<string, unknown>>(em, `select * from ${table} where id = ? and account_id = ?`, [id, accountId]);
    if (!row) throw notFound();
    return row;
  }
  const row = await one<Record<string, unknown>>(
    em,
    `update ${table} set ${cols.map((c) => `${c} = ?`).join(', ')} where id = ? and account_id = ? returning *`,
    [...cols.map((c) => encode(input[c])), id, accountId],
  );
  if (!row) throw notFound();
  return row;
}

export async function listIdentities(em: EntityManager, kind: IdentityKind, accountId: number) {
  return many<Record<string, unknown>>(em, `select * from ${IDENTITY_TABLES[kind].table} where account_id = ? order by id`, [accountId]);
}

export async function deleteIdentity(em: EntityManager, kind: IdentityKind, accountId: number, id: number) {
  const row = await one(em, `delete from ${IDENTITY_TABLES[kind].table} where id = ? and account_id = ? returning id`, [id, accountId]);
  if (!row) throw notFound();
}
