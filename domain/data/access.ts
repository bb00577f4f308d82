import { hasPermission } from '../account/index.js';
import type { FieldMask, StatusMove, TableAccess } from './definitions.js';

// Who may see, write and unmask what in a table: pure rules over the caller's current permissions.

/** The caller as the data rules see it: its issuer's permissions and user id; the operator and the service itself see everything. */
export interface DataCaller {
  permissions: readonly string[];
  userId: number | null;
  /** operator or system: every grant holds. */
  unrestricted: boolean;
}

function granted(grant: { permissions: string[]; users: number[] }, caller: DataCaller): boolean {
  if (caller.unrestricted) return true;
  if (!grant.permissions.length && !grant.users.length) return true;
  if (caller.userId !== null && grant.users.includes(caller.userId)) return true;
  return grant.permissions.some((p) => hasPermission(caller.permissions, p));
}

export const canViewTable = (access: TableAccess, caller: DataCaller) => granted(access.view, caller);
/** Writing needs the view grant too: a table the caller cannot see is not found, whatever it may write. */
export const canWriteTable = (access: TableAccess, caller: DataCaller) => granted(access.view, caller) && granted(access.write, caller);

/** The masks that apply to this caller, by column key. */
export function masksFor(masks: readonly FieldMask[], caller: DataCaller): Map<string, FieldMask> {
  const out = new Map<string, FieldMask>();
  if (caller.unrestricted) return out;
  for (const m of masks) if (!hasPermission(caller.permissions, m.unless_permission)) out.set(m.column, m);
  return out;
}

/** Whether the caller may make a move (a move with no permission is open to every writer). */
export const mayMove = (move: StatusMove, caller: DataCaller) =>
  caller.unrestricted || !move.permission || hasPermission(caller.permissions, move.permission);
