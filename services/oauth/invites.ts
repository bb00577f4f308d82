import crypto from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { trimBase } from '../../domain/oauth/index.js';
import type { OperatorContext } from '../platform/context.js';
import { forbidden, notFound } from '../platform/errors.js';
import { hashToken } from '../platform/secrets.js';
import { iso } from '../platform/time.js';
import { personById, type PersonRow } from '../account/index.js';
import { insertInvite, liveInvite, passwordSetAt, useInvite } from './store.js';
import { setPassword } from './passwords.js';

// How a person gets a password: an invitation link the operator makes (used once, before it
// expires; only its hash is kept), or a password the operator sets. Either way the person then signs
// in on the authorization server's pages to let an assistant connect.

export const INVITE_PATH = '/oauth/invite';
export const DEFAULT_INVITE_HOURS = 72;

async function personOf(em: EntityManager, accountId: number, userId: number): Promise<PersonRow> {
  const person = await personById(em, accountId, userId);
  if (!person) throw notFound('User');
  return person;
}

/** A new invitation link for the user (their earlier unused links stop working). */
export async function inviteUser(
  oc: OperatorContext,
  publicBaseUrl: string,
  accountId: number,
  userId: number,
  hours = DEFAULT_INVITE_HOURS,
) {
  const person = await personOf(oc.em, accountId, userId);
  if (!person.active) throw forbidden('This user is deactivated; reactivate them before inviting them.', 'user_inactive');
  const token = crypto.randomBytes(32).toString('base64url');
  const row = await insertInvite(oc.em, { accountId, userId, tokenHash: hashToken(token), expiresInSeconds: hours * 3600 });
  oc.log.info({ actor: 'operator', account: accountId, user: userId, invite: row.id }, 'user invited');
  return {
    user_id: userId,
    account_id: accountId,
    url: `${trimBase(publicBaseUrl)}${INVITE_PATH}/${token}`,
    expires_at: iso(row.expires_at),
  };
}

/** Sets the user's password on the operator's word. */
export async function setUserPassword(oc: OperatorContext, accountId: number, userId: number, password: string) {
  const person = await personOf(oc.em, accountId, userId);
  await setPassword(oc.em, person, password);
  oc.log.info({ actor: 'operator', account: accountId, user: userId }, 'user password set');
  return { user_id: userId, account_id: accountId, password_set_at: iso(await passwordSetAt(oc.em, userId))! };
}

/** The person a live invitation is for (the link's page greets them); null when the link is unknown, used or expired, or its user deactivated. */
export async function invitedPerson(em: EntityManager, token: string): Promise<PersonRow | null> {
  const invite = await liveInvite(em, hashToken(token));
  if (!invite) return null;
  const person = await personById(em, invite.account_id, invite.user_id);
  return person?.active ? person : null;
}

/**
 * Sets the password through a live invitation, using it up: one transaction, so a link used twice
 * at once sets one password, and a refused password leaves the link live. False when the link is
 * not live any more.
 */
export async function acceptInvite(em: EntityManager, token: string, password: string): Promise<PersonRow | null> {
  return em.transactional(async (tx) => {
    const invite = await liveInvite(tx, hashToken(token));
    if (!invite) return null;
    const person = await personById(tx, invite.account_id, invite.user_id);
    if (!person?.active) return null;
    await setPassword(tx, person, password);
    if (!(await useInvite(tx, invite.id))) return null;
    return person;
  });
}
