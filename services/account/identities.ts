import { exec, many, one } from '../../entities/db.js';
import { notFound } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { requireAccount } from './settings.js';
import { withIsoTimestamps } from '../platform/time.js';

// Sending identities and routes of an account, kept by the operator. Each kind has its own state:
// alphanumeric ids an approval, numbers capabilities and a released flag, short codes an assignment.
export const IDENTITY_TABLES = {
  'sender-ids': { table: 'sender_ids', columns: ['value', 'channel_id', 'approval_status'], what: 'Sender id' },
  'phone-numbers': {
    table: 'phone_numbers',
    columns: ['number', 'channel_id', 'capabilities', 'released', 'provider_phone_number_id', 'business_account_id'],
    what: 'Phone number',
  },
  'short-codes': { table: 'short_codes', columns: ['code', 'channel_id', 'assignment_status'], what: 'Short code' },
  channels: { table: 'channels', columns: ['channel_type', 'code', 'provider', 'is_default', 'active', 'config'], what: 'Channel' },
  blacklist: { table: 'blacklist', columns: ['phone', 'channel_id'], what: 'Blacklist entry' },
} as const;

export type IdentityKind = keyof typeof IDENTITY_TABLES;
/** The fields of one kind: its columns (the request schemas decide which are required and how they look). */
export type IdentityInput<K extends IdentityKind> = Partial<Record<(typeof IDENTITY_TABLES)[K]['columns'][number], unknown>>;
export type IdentityRow = Record<string, unknown>;

const encode = (v: unknown) => (v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
/** Numbers are kept as +digits, whatever spacing or punctuation the operator typed. */
const e164 = (v: unknown) => `+${String(v).replace(/[^\d]/g, '')}`;

function normalized<K extends IdentityKind>(kind: K, input: IdentityInput<K>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...input };
  if (kind === 'phone-numbers' && out.number !== undefined) out.number = e164(out.number);
  if (kind === 'blacklist' && out.phone !== undefined) out.phone = e164(out.phone);
  // A channel's provider follows its type unless the operator names one.
  if (kind === 'channels' && out.channel_type !== undefined) out.provider ??= out.channel_type === 'sms' ? 'sms-gateway' : 'whatsapp-cloud';
  return out;
}

export async function listIdentities(oc: OperatorContext, kind: IdentityKind, accountId: number): Promise<IdentityRow[]> {
  await requireAccount(oc, accountId);
  return (await many<IdentityRow>(oc.em, `select * from ${IDENTITY_TABLES[kind].table} where account_id = ? order by id`, [accountId])).map(
    withIsoTimestamps,
  );
}

export async function addIdentity<K extends IdentityKind>(
  oc: OperatorContext,
  kind: K,
  accountId: number,
  input: IdentityInput<K>,
): Promise<IdentityRow> {
  await requireAccount(oc, accountId);
  const { table, columns } = IDENTITY_TABLES[kind];
  const values = normalized(kind, input);
  const cols = columns.filter((c) => values[c] !== undefined);
  const row = await oc.em.transactional(async (tx) => {
    // One default route per account and channel type: a new default replaces the old one.
    if (kind === 'channels' && values.is_default === true) {
      await exec(tx, 'update channels set is_default = false where account_id = ? and channel_type = ?', [accountId, values.channel_type]);
    }
    return one<IdentityRow>(
      tx,
      `insert into ${table} (account_id, ${cols.join(', ')}, created_at) values (?, ${cols.map(() => '?').join(', ')}, now()) returning *`,
      [accountId, ...cols.map((c) => encode(values[c]))],
    );
  });
  oc.log.info({ actor: 'operator', account: accountId, kind, id: row!.id }, 'identity added');
  return withIsoTimestamps(row!);
}

export async function updateIdentity<K extends IdentityKind>(
  oc: OperatorContext,
  kind: K,
  accountId: number,
  id: number,
  input: IdentityInput<K>,
): Promise<IdentityRow> {
  const { table, columns, what } = IDENTITY_TABLES[kind];
  const values = normalized(kind, input);
  const cols = columns.filter((c) => values[c] !== undefined);
  const row = cols.length
    ? await one<IdentityRow>(
        oc.em,
        `update ${table} set ${cols.map((c) => `${c} = ?`).join(', ')} where id = ? and account_id = ? returning *`,
        [...cols.map((c) => encode(values[c])), id, accountId],
      )
    : await one<IdentityRow>(oc.em, `select * from ${table} where id = ? and account_id = ?`, [id, accountId]);
  if (!row) throw notFound(what);
  return withIsoTimestamps(row);
}

export async function removeIdentity(oc: OperatorContext, kind: IdentityKind, accountId: number, id: number): Promise<{ deleted: true }> {
  const { table, what } = IDENTITY_TABLES[kind];
  const row = await one(oc.em, `delete from ${table} where id = ? and account_id = ? returning id`, [id, accountId]);
  if (!row) throw notFound(what);
  return { deleted: true };
}
