import type { EntityManager } from '@mikro-orm/postgresql';
import { sql } from 'kysely';
import { tablesOf, type Row } from '../../entities/database.js';
import type { PostMedia, PostPlatform, PostStatus, TargetStatus } from '../../domain/posts/index.js';

// The posts family's statements: the only code that names social_connections, posts and
// post_targets. Every statement is scoped by account_id, so one account's uid never reaches another's row.

const db = (em: EntityManager) => tablesOf(em, 'posts');
const json = <T>(v: T) => sql<T>`${JSON.stringify(v)}`;

export type ConnectionRecord = Row<'posts', 'social_connections'>;
export type PostRecord = Row<'posts', 'posts'>;
export type TargetRecord = Row<'posts', 'post_targets'>;

export const connectionsOf = (em: EntityManager, accountId: number) =>
  db(em).selectFrom('social_connections').selectAll().where('account_id', '=', accountId).orderBy('platform').execute();

export const connectionOf = (em: EntityManager, accountId: number, platform: PostPlatform) =>
  db(em)
    .selectFrom('social_connections')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('platform', '=', platform)
    .executeTakeFirst();

/** One connection per account and platform: a second PUT replaces the page and its token. */
export const saveConnection = (
  em: EntityManager,
  accountId: number,
  platform: PostPlatform,
  v: { external_id: string; name: string | null; access_token: string },
) =>
  db(em)
    .insertInto('social_connections')
    .values({ account_id: accountId, platform, ...v, created_at: sql`now()`, updated_at: sql`now()` })
    .onConflict((oc) => oc.columns(['account_id', 'platform']).doUpdateSet({ ...v, updated_at: sql`now()` }))
    .returningAll()
    .executeTakeFirstOrThrow();

export async function deleteConnection(em: EntityManager, accountId: number, platform: PostPlatform): Promise<boolean> {
  const r = await db(em)
    .deleteFrom('social_connections')
    .where('account_id', '=', accountId)
    .where('platform', '=', platform)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export interface PostValues {
  text: string | null;
  link: string | null;
  media: PostMedia[];
  status: PostStatus;
  scheduled_at: Date | null;
}

export async function insertPost(em: EntityManager, accountId: number, uid: string, v: PostValues, platforms: readonly PostPlatform[]) {
  const post = await db(em)
    .insertInto('posts')
    .values({ uid, account_id: accountId, ...v, media: json(v.media), created_at: sql`now()`, updated_at: sql`now()` })
    .returningAll()
    .executeTakeFirstOrThrow();
  await replaceTargets(em, accountId, post.id, platforms);
  return post;
}

/** The targets become exactly `platforms` (a draft's or a scheduled post's edit), all pending again. */
export async function replaceTargets(em: EntityManager, accountId: number, postId: number, platforms: readonly PostPlatform[]) {
  await db(em).deleteFrom('post_targets').where('post_id', '=', postId).where('account_id', '=', accountId).execute();
  if (platforms.length === 0) return;
  await db(em)
    .insertInto('post_targets')
    .values(
      platforms.map((platform) => ({ post_id: postId, account_id: accountId, platform, created_at: sql`now()`, updated_at: sql`now()` })),
    )
    .execute();
}

export async function postOf(em: EntityManager, accountId: number, uid: string, lock = false) {
  let q = db(em).selectFrom('posts').selectAll().where('account_id', '=', accountId).where('uid', '=', uid);
  if (lock) q = q.forUpdate();
  return q.executeTakeFirst();
}

export const targetsOf = (em: EntityManager, accountId: number, postIds: number[]) =>
  postIds.length === 0
    ? Promise.resolve([] as TargetRecord[])
    : db(em)
        .selectFrom('post_targets')
        .selectAll()
        .where('account_id', '=', accountId)
        .where('post_id', 'in', postIds)
        .orderBy('platform')
        .execute();

export async function listPostRows(em: EntityManager, accountId: number, q: { status?: PostStatus; offset: number; limit: number }) {
  let base = db(em).selectFrom('posts').where('account_id', '=', accountId);
  if (q.status) base = base.where('status', '=', q.status);
  const [rows, total] = await Promise.all([
    base.selectAll().orderBy('id', 'desc').offset(q.offset).limit(q.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export const updatePost = (em: EntityManager, accountId: number, id: number, v: Partial<PostValues> & { published_at?: Date | null }) =>
  db(em)
    .updateTable('posts')
    .set({ ...v, ...(v.media ? { media: json(v.media) } : {}), updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();

export async function deletePost(em: EntityManager, accountId: number, id: number) {
  await db(em).deleteFrom('post_targets').where('account_id', '=', accountId).where('post_id', '=', id).execute();
  await db(em).deleteFrom('posts').where('account_id', '=', accountId).where('id', '=', id).execute();
}

export const updateTarget = (
  em: EntityManager,
  accountId: number,
  postId: number,
  platform: PostPlatform,
  v: {
    status?: TargetStatus;
    platform_post_id?: string | null;
    container_id?: string | null;
    error?: Record<string, unknown> | null;
    attempts?: number;
    published_at?: Date | null;
  },
) =>
  db(em)
    .updateTable('post_targets')
    .set({ ...v, ...(v.error !== undefined ? { error: v.error === null ? null : json(v.error) } : {}), updated_at: sql`now()` })
    .where('account_id', '=', accountId)
    .where('post_id', '=', postId)
    .where('platform', '=', platform)
    .returningAll()
    .executeTakeFirstOrThrow();
