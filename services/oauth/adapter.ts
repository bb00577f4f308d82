import type { MikroORM } from '@mikro-orm/postgresql';
import { errors, type Adapter, type AdapterConstructor, type AdapterPayload } from 'oidc-provider';
import type { Logger } from '../../logger.js';
import { hashToken } from '../platform/secrets.js';
import { parseSubject } from '../../domain/oauth/index.js';
import {
  consumeRecord,
  destroyGrantRecords,
  destroyRecord,
  dropExpiredRecords,
  findRecord,
  findRecordByUid,
  upsertRecord,
} from './store.js';

/**
 * oidc-provider's storage in PostgreSQL (its Adapter interface: one instance per model). Every
 * object is keyed by the SHA-256 of its id, and the id is taken out of the stored payload (the
 * provider writes it there as `jti`) and put back from the value presented on the way out: a
 * database reader finds no code, token or session id it could present. An interaction's copy of its
 * session's cookie id is dropped too (the provider never reads it back).
 *
 * Codes and refresh tokens are consumed by one guarded statement: of two requests racing with the
 * same one, the second finds it used and everything of its grant is revoked, as the provider does
 * for a reuse it sees itself (a used code or refresh token presented again revokes what it issued).
 */
export function postgresAdapter(orm: MikroORM, log: Logger): AdapterConstructor {
  const em = () => orm.em.fork();
  return class PostgresAdapter implements Adapter {
    constructor(private readonly model: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const stored: Record<string, unknown> = { ...payload };
      delete stored.jti;
      if (this.model === 'Interaction' && payload.session) {
        const { cookie: _cookie, ...session } = payload.session;
        stored.session = session;
      }
      const subject = parseSubject(payload.accountId ?? payload.session?.accountId);
      await upsertRecord(
        em(),
        {
          model: this.model,
          idHash: hashToken(id),
          grantId: this.model === 'Grant' ? id : (payload.grantId ?? null),
          uidHash: this.model === 'Session' && payload.uid ? hashToken(payload.uid) : null,
          clientId: payload.clientId ?? (typeof payload.client_id === 'string' ? payload.client_id : null),
          accountId: subject?.accountId ?? null,
          userId: subject?.userId ?? null,
          expiresIn: typeof expiresIn === 'number' && expiresIn > 0 ? Math.ceil(expiresIn) : null,
        },
        stored,
      );
      // Now and then, a bounded sweep of what expired (nobody waits for it).
      if (Math.random() < 0.01) dropExpiredRecords(em()).catch((err: unknown) => log.debug({ err }, 'oauth sweep failed'));
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      const row = await findRecord(em(), this.model, hashToken(id));
      return row ? revive(row, id) : undefined;
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const row = await findRecordByUid(em(), this.model, hashToken(uid));
      // A session's id is its cookie value, which a lookup by uid cannot know: the provider only
      // reads such a session to end it or list it, never to authenticate with it.
      return row ? revive(row, undefined) : undefined;
    }

    async findByUserCode(): Promise<undefined> {
      return undefined; // the device flow is not offered
    }

    async consume(id: string): Promise<void> {
      const { consumed, grantId } = await consumeRecord(em(), this.model, hashToken(id));
      if (consumed) return;
      if (grantId) await destroyGrantRecords(em(), grantId);
      throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'authorization code'} already used`);
    }

    async destroy(id: string): Promise<void> {
      await destroyRecord(em(), this.model, hashToken(id));
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      await destroyGrantRecords(em(), grantId, this.model);
    }
  };
}

/** The payload as the provider wrote it: its id back in `jti`, a used code or token marked consumed. */
function revive(row: { payload: Record<string, unknown>; consumed_at: string | null }, id: string | undefined): AdapterPayload {
  const payload = { ...row.payload } as AdapterPayload;
  if (id !== undefined) payload.jti = id;
  if (row.consumed_at !== null) payload.consumed = true;
  return payload;
}
