import { notFound } from '../platform/errors.js';
import type { OperatorContext } from '../platform/context.js';
import { requireAccount } from '../account/index.js';
import { withIsoTimestamps } from '../platform/time.js';
import {
  IDENTITY_TABLES,
  deleteIdentity,
  identitiesOf,
  insertIdentity,
  updateIdentityColumns,
  type IdentityKind,
  type IdentityRecord,
} from './store/routes.js';

// Sending identities and routes of an account, kept by the operator. Each kind has its own state:
// alphanumeric ids an approval, numbers capabilities and a released flag, short codes an assignment.
// The operator's side of messaging's routes (api/account/settings.ts serves it under /admin/v1).

export type { IdentityKind };
const WHAT: Record<IdentityKind, string> = {
  'sender-ids': 'Sender id',
  'phone-numbers': 'Phone number',
  'short-codes': 'Short code',
  channels: 'Channel',
  blacklist: 'Blacklist entry',
};

/** The fields of one kind: its columns (the request schemas decide which are required and how they look). */
export type IdentityInput<K extends IdentityKind> = Partial<Record<(typeof IDENTITY_TABLES)[K]['columns'][number], unknown>>;

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

export async function listIdentities<K extends IdentityKind>(
  oc: OperatorContext,
  kind: K,
  accountId: number,
): Promise<IdentityRecord<K>[]> {
  await requireAccount(oc, accountId);
  return (await identitiesOf(oc.em, kind, accountId)).map(withIsoTimestamps);
}

export async function addIdentity<K extends IdentityKind>(
  oc: OperatorContext,
  kind: K,
  accountId: number,
  input: IdentityInput<K>,
): Promise<IdentityRecord<K>> {
  await requireAccount(oc, accountId);
  const row = await insertIdentity(oc.em, kind, accountId, normalized(kind, input));
  oc.log.info({ actor: 'operator', account: accountId, kind, id: row!.id }, 'identity added');
  return withIsoTimestamps(row!);
}

export async function updateIdentity<K extends IdentityKind>(
  oc: OperatorContext,
  kind: K,
  accountId: number,
  id: number,
  input: IdentityInput<K>,
): Promise<IdentityRecord<K>> {
  const row = await updateIdentityColumns(oc.em, kind, accountId, id, normalized(kind, input));
  if (!row) throw notFound(WHAT[kind]);
  return withIsoTimestamps(row);
}

export async function removeIdentity(oc: OperatorContext, kind: IdentityKind, accountId: number, id: number): Promise<{ deleted: true }> {
  if (!(await deleteIdentity(oc.em, kind, accountId, id))) throw notFound(WHAT[kind]);
  return { deleted: true };
}
