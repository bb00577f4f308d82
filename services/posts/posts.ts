import type { EntityManager } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import type { Config } from '../../config.js';
import {
  POST_PLATFORMS,
  contentProblems,
  scheduleProblem,
  settledStatus,
  type PostContent,
  type PostMedia,
  type PostPlatform,
  type PostStatus,
  type TargetStatus,
} from '../../domain/posts/index.js';
import { conflict, notFound, validationFailed } from '../platform/errors.js';
import type { RequestContext } from '../platform/context.js';
import { newUid } from '../platform/ids.js';
import { tokenHint } from '../platform/secrets.js';
import { iso } from '../platform/time.js';
import { pageAnswer } from '../platform/pagination.js';
import { emitEvent } from '../webhooks/index.js';
import { signalWithStart, signalWorkflow } from '../../temporal/starters.js';
import { scheduledPostStarter, scheduledPostWorkflowId } from '../../workflows/posts/scheduled-post.starter.js';
import type { SocialContent, SocialDestination, SocialPublisher } from '../../providers/index.js';
import * as store from './store.js';
import type { ConnectionBody, PostCreateBody, PostUpdateBody } from './schemas.js';

// Social posts (docs/posts.md): drafts, a schedule held by a Temporal workflow per post
// (post/<account>/<uid>: a durable timer, rescheduled and cancelled by signals), and publishing to
// each platform the post names through the account's connection there, with each platform's own
// status, post id and refusal. Every write checks the whole post first (422 naming each field,
// nothing written) and the workflow is signalled inside the write's transaction: a signal Temporal
// refuses rolls the write back.

export interface PostDeps {
  temporal: Client;
  config: Pick<Config, 'taskQueue'>;
}

const PLATFORM_NAME: Record<PostPlatform, string> = { facebook: 'Facebook', instagram: 'Instagram' };
const UID = /^pst_[A-Za-z0-9]{20}$/;

const existingUid = (uid: string) => {
  if (!UID.test(uid)) throw notFound('Post');
  return uid;
};

// --- Connections ------------------------------------------------------------------------------------

const connectionView = (c: store.ConnectionRecord) => ({
  id: c.id,
  platform: c.platform,
  external_id: c.external_id,
  name: c.name,
  token_hint: tokenHint(c.access_token),
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

const platformOf = (p: string): PostPlatform => {
  if (!(POST_PLATFORMS as readonly string[]).includes(p)) throw notFound('Connection');
  return p as PostPlatform;
};

export async function listConnections(rc: RequestContext) {
  return { connections: (await store.connectionsOf(rc.em, rc.account.id)).map(connectionView) };
}

export async function getConnection(rc: RequestContext, platform: string) {
  const c = await store.connectionOf(rc.em, rc.account.id, platformOf(platform));
  if (!c) throw notFound('Connection');
  return connectionView(c);
}

/** PUT: the account's page on that platform and its token (a second PUT replaces both). */
export async function saveConnection(rc: RequestContext, platform: string, body: ConnectionBody) {
  const p = platformOf(platform);
  const c = await store.saveConnection(rc.em, rc.account.id, p, {
    external_id: body.external_id,
    name: body.name ?? null,
    access_token: body.access_token,
  });
  rc.log.info({ account: rc.account.id, platform: p, external_id: c.external_id }, 'social connection saved');
  return connectionView(c);
}

/** DELETE: a post still to publish there fails at its time with no_connection; a scheduled one is refused first. */
export async function removeConnection(rc: RequestContext, platform: string) {
  const p = platformOf(platform);
  if (!(await store.deleteConnection(rc.em, rc.account.id, p))) throw notFound('Connection');
  return { platform: p, deleted: true as const };
}

// --- Posts ------------------------------------------------------------------------------------------

async function postView(em: EntityManager, accountId: number, post: store.PostRecord, targets?: store.TargetRecord[]) {
  const ts = targets ?? (await store.targetsOf(em, accountId, [post.id]));
  return viewOf(post, ts);
}

function viewOf(post: store.PostRecord, ts: store.TargetRecord[]) {
  const scheduled = post.scheduled_at !== null && post.status !== 'draft';
  return {
    uid: post.uid,
    status: post.status,
    text: post.text,
    link: post.link,
    media: post.media,
    platforms: ts.map((t) => t.platform),
    scheduled_at: iso(post.scheduled_at),
    published_at: iso(post.published_at),
    targets: ts.map((t) => ({
      platform: t.platform,
      status: t.status,
      platform_post_id: t.platform_post_id,
      error: t.error as { code: string; subcode: number | null; message: string; transient: boolean } | null,
      attempts: t.attempts,
      published_at: iso(t.published_at),
    })),
    workflow_id: scheduled ? scheduledPostWorkflowId(post.account_id, post.uid) : null,
    created_at: iso(post.created_at),
    updated_at: iso(post.updated_at),
  };
}
export type PostView = ReturnType<typeof viewOf>;

const contentOf = (b: { text?: string | null; link?: string | null; media?: PostMedia[] }, base?: PostContent): PostContent => ({
  text: b.text !== undefined ? b.text || null : (base?.text ?? null),
  link: b.link !== undefined ? b.link || null : (base?.link ?? null),
  media: b.media !== undefined ? b.media.map((m) => ({ type: m.type, url: m.url, alt_text: m.alt_text ?? null })) : (base?.media ?? []),
});

/** The platforms must each have a connection before a post to them is scheduled or published. */
async function connectionProblems(em: EntityManager, accountId: number, platforms: readonly PostPlatform[]) {
  const have = new Set((await store.connectionsOf(em, accountId)).map((c) => c.platform));
  const missing = platforms.filter((p) => !have.has(p));
  return missing.length
    ? {
        platforms: missing.map(
          (p) => `The account has no ${PLATFORM_NAME[p]} connection: connect one first (PUT /api/v3/posts/connections/${p}).`,
        ),
      }
    : {};
}

/** A time as a Date, or the field's 422. */
function timeOf(v: string): Date {
  const at = new Date(v);
  if (Number.isNaN(at.getTime())) throw validationFailed({ scheduled_at: ['Not a time: use ISO 8601, e.g. 2026-12-01T09:00:00Z.'] });
  return at;
}

/** Everything that keeps the post from its platforms, named at once. */
async function check(rc: RequestContext, content: PostContent, platforms: PostPlatform[], at: Date | null, publishing: boolean) {
  const errors: Record<string, string[]> = { ...contentProblems(content, platforms) };
  if (at) {
    const p = scheduleProblem(at, platforms, new Date());
    if (p) errors.scheduled_at = [p];
  }
  if (at || publishing) Object.assign(errors, await connectionProblems(rc.em, rc.account.id, platforms));
  if (Object.keys(errors).length) throw validationFailed(errors);
}

const startSchedule = (deps: PostDeps, accountId: number, uid: string, at: Date) =>
  signalWithStart(
    deps,
    scheduledPostStarter,
    { accountId, postUid: uid },
    [{ accountId, postUid: uid, at: at.toISOString() }],
    'reschedule',
    at.toISOString(),
  );

/** POST /posts: a draft, or (with scheduled_at) a scheduled post whose workflow starts now. */
export async function createPost(rc: RequestContext, deps: PostDeps, body: PostCreateBody) {
  const platforms = [...body.platforms] as PostPlatform[];
  const content = contentOf(body);
  const at = body.scheduled_at ? timeOf(body.scheduled_at) : null;
  await check(rc, content, platforms, at, false);
  const uid = newUid('pst');
  return rc.em.transactional(async (em) => {
    const post = await store.insertPost(
      em,
      rc.account.id,
      uid,
      { ...content, status: at ? 'scheduled' : 'draft', scheduled_at: at },
      platforms,
    );
    if (at) await startSchedule(deps, rc.account.id, uid, at);
    return postView(em, rc.account.id, post);
  });
}

export async function getPost(rc: RequestContext, uid: string) {
  const post = await store.postOf(rc.em, rc.account.id, existingUid(uid));
  if (!post) throw notFound('Post');
  return postView(rc.em, rc.account.id, post);
}

export async function listPosts(rc: RequestContext, q: { status?: PostStatus; page?: number; per_page?: number }) {
  const perPage = Math.min(100, q.per_page ?? 20);
  const page = q.page ?? 1;
  const { rows, total } = await store.listPostRows(rc.em, rc.account.id, {
    status: q.status,
    offset: (page - 1) * perPage,
    limit: perPage,
  });
  const targets = await store.targetsOf(
    rc.em,
    rc.account.id,
    rows.map((r) => r.id),
  );
  const posts = rows.map((r) =>
    viewOf(
      r,
      targets.filter((t) => t.post_id === r.id),
    ),
  );
  return pageAnswer('posts', posts, { page, perPage }, total);
}

/** The post locked for this transaction, or 404. */
async function lockedPost(em: EntityManager, accountId: number, uid: string) {
  const post = await store.postOf(em, accountId, existingUid(uid), true);
  if (!post) throw notFound('Post');
  return post;
}

const EDITABLE: readonly PostStatus[] = ['draft', 'scheduled', 'cancelled'];

/** PATCH: a draft's, a scheduled or a cancelled post's content and platforms, checked as a whole again. */
export async function updatePost(rc: RequestContext, uid: string, body: PostUpdateBody) {
  return rc.em.transactional(async (em) => {
    const post = await lockedPost(em, rc.account.id, uid);
    if (!EDITABLE.includes(post.status)) throw conflict(`A ${post.status.replace('_', ' ')} post cannot be edited; write a new one.`);
    const old = await store.targetsOf(em, rc.account.id, [post.id]);
    const platforms = body.platforms ? ([...body.platforms] as PostPlatform[]) : old.map((t) => t.platform);
    const content = contentOf(body, { text: post.text, link: post.link, media: post.media });
    const at = post.status === 'scheduled' && post.scheduled_at ? new Date(post.scheduled_at) : null;
    await check({ ...rc, em }, content, platforms, at, false);
    const next = await store.updatePost(em, rc.account.id, post.id, content);
    if (body.platforms) await store.replaceTargets(em, rc.account.id, post.id, platforms);
    return postView(em, rc.account.id, next);
  });
}

/**
 * POST /posts/{uid}/schedule: a draft or a cancelled post is scheduled (its workflow starts), a
 * scheduled one moves to the new time (the reschedule signal).
 */
export async function schedulePost(rc: RequestContext, deps: PostDeps, uid: string, scheduledAt: string) {
  const at = timeOf(scheduledAt);
  return rc.em.transactional(async (em) => {
    const post = await lockedPost(em, rc.account.id, uid);
    if (!EDITABLE.includes(post.status)) throw conflict(`A ${post.status.replace('_', ' ')} post cannot be scheduled again.`);
    const targets = await store.targetsOf(em, rc.account.id, [post.id]);
    await check(
      { ...rc, em },
      { text: post.text, link: post.link, media: post.media },
      targets.map((t) => t.platform),
      at,
      false,
    );
    const next = await store.updatePost(em, rc.account.id, post.id, { status: 'scheduled', scheduled_at: at });
    await startSchedule(deps, rc.account.id, post.uid, at);
    return postView(em, rc.account.id, next, targets);
  });
}

/** POST /posts/{uid}/publish: now ("share now"): the post's workflow fires at once, through the same path as a schedule. */
export async function publishPostNow(rc: RequestContext, deps: PostDeps, uid: string) {
  return rc.em.transactional(async (em) => {
    const post = await lockedPost(em, rc.account.id, uid);
    if (!EDITABLE.includes(post.status)) throw conflict(`A ${post.status.replace('_', ' ')} post cannot be published again.`);
    const targets = await store.targetsOf(em, rc.account.id, [post.id]);
    await check(
      { ...rc, em },
      { text: post.text, link: post.link, media: post.media },
      targets.map((t) => t.platform),
      null,
      true,
    );
    const now = new Date();
    const next = await store.updatePost(em, rc.account.id, post.id, { status: 'scheduled', scheduled_at: now });
    await startSchedule(deps, rc.account.id, post.uid, now);
    return postView(em, rc.account.id, next, targets);
  });
}

/** POST /posts/{uid}/cancel: a scheduled post stops before its time (it can be scheduled again). */
export async function cancelPost(rc: RequestContext, deps: PostDeps, uid: string) {
  return rc.em.transactional(async (em) => {
    const post = await lockedPost(em, rc.account.id, uid);
    if (post.status !== 'scheduled')
      throw conflict(
        post.status === 'publishing'
          ? 'The post is being published; it can no longer be cancelled.'
          : `Only a scheduled post can be cancelled; this one is ${post.status.replace('_', ' ')}.`,
      );
    const next = await store.updatePost(em, rc.account.id, post.id, { status: 'cancelled' });
    await signalWorkflow(deps.temporal, scheduledPostStarter, scheduledPostWorkflowId(rc.account.id, post.uid), 'cancel');
    return postView(em, rc.account.id, next);
  });
}

/** DELETE /posts/{uid}: our record (a published post stays on the platform); a scheduled one is cancelled first. */
export async function deletePost(rc: RequestContext, deps: PostDeps, uid: string) {
  return rc.em.transactional(async (em) => {
    const post = await lockedPost(em, rc.account.id, uid);
    if (post.status === 'publishing') throw conflict('The post is being published; delete it once it has finished.');
    if (post.status === 'scheduled')
      await signalWorkflow(deps.temporal, scheduledPostStarter, scheduledPostWorkflowId(rc.account.id, post.uid), 'cancel');
    await store.deletePost(em, rc.account.id, post.id);
    return { uid: post.uid, deleted: true as const };
  });
}

// --- Publishing (the scheduled post workflow's activity) -------------------------------------------

export type PublishOutcome =
  { kind: 'not_due'; at: string } | { kind: 'closed'; status: PostStatus } | { kind: 'pending'; pending: number };

/** A due post's start: still scheduled (or publishing after an earlier attempt), and its time has come. */
async function claimDue(em: EntityManager, accountId: number, uid: string): Promise<PublishOutcome | store.PostRecord> {
  return em.transactional(async (tx) => {
    const post = await store.postOf(tx, accountId, uid, true);
    if (!post) return { kind: 'closed', status: 'cancelled' } as const;
    if (post.status !== 'scheduled' && post.status !== 'publishing') return { kind: 'closed', status: post.status } as const;
    const at = post.scheduled_at ? new Date(post.scheduled_at) : new Date();
    // A second of slack: the timer and the database clock are not the same clock.
    if (post.status === 'scheduled' && at.getTime() > Date.now() + 1000) return { kind: 'not_due', at: at.toISOString() } as const;
    return post.status === 'publishing' ? post : store.updatePost(tx, accountId, post.id, { status: 'publishing' });
  });
}

/**
 * One publish attempt of a due post: each platform still pending is published through the
 * account's connection there. A platform's success or final refusal is recorded with its event in
 * one transaction (post.published, post.failed); a transient refusal stays pending for the next
 * attempt, unless this is the last (`final`). Idempotent for what it recorded: a published
 * platform is never published again; an Instagram container is reused until it expires.
 */
export async function publishDuePost(
  em: EntityManager,
  publisher: SocialPublisher,
  input: { accountId: number; postUid: string; final: boolean },
): Promise<PublishOutcome> {
  const { accountId } = input;
  const claimed = await claimDue(em, accountId, input.postUid);
  if ('kind' in claimed) return claimed;
  const post = claimed;
  const content: SocialContent = {
    text: post.text,
    link: post.link,
    media: post.media[0] ? { type: post.media[0].type, url: post.media[0].url, altText: post.media[0].alt_text ?? null } : null,
  };
  const targets = await store.targetsOf(em, accountId, [post.id]);
  for (const t of targets) {
    if (t.status !== 'pending') continue;
    const conn = await store.connectionOf(em, accountId, t.platform);
    let outcome: { ok: true; id: string } | { ok: false; permanent: boolean; error: Record<string, unknown> };
    if (!conn) {
      outcome = {
        ok: false,
        permanent: true,
        error: {
          code: 'no_connection',
          subcode: null,
          message: `The account has no ${PLATFORM_NAME[t.platform]} connection.`,
          transient: false,
        },
      };
    } else {
      const to: SocialDestination = { platform: t.platform, externalId: conn.external_id, accessToken: conn.access_token };
      const r = await publisher.publish(to, content, {
        containerId: t.container_id,
        onContainer: async (id) => {
          await store.updateTarget(em, accountId, post.id, t.platform, { container_id: id });
        },
      });
      const sub = r.ok ? null : /\/(\d+)$/.exec(r.code)?.[1];
      outcome = r.ok
        ? { ok: true, id: r.value.platformPostId }
        : {
            ok: false,
            permanent: r.permanent,
            error: { code: r.code, subcode: sub ? Number(sub) : null, message: r.message, transient: !r.permanent },
          };
    }
    await recordOutcome(em, post, t, outcome, input.final);
  }
  return settle(em, accountId, post);
}

async function recordOutcome(
  em: EntityManager,
  post: store.PostRecord,
  t: store.TargetRecord,
  outcome: { ok: true; id: string } | { ok: false; permanent: boolean; error: Record<string, unknown> },
  final: boolean,
) {
  const accountId = post.account_id;
  await em.transactional(async (tx) => {
    const attempts = t.attempts + 1;
    if (outcome.ok) {
      const now = new Date();
      await store.updateTarget(tx, accountId, post.id, t.platform, {
        status: 'published',
        platform_post_id: outcome.id,
        error: null,
        attempts,
        published_at: now,
      });
      await emitEvent(tx, accountId, 'post.published', {
        post_uid: post.uid,
        platform: t.platform,
        platform_post_id: outcome.id,
        published_at: now.toISOString(),
      });
      return;
    }
    const failed: TargetStatus = outcome.permanent || final ? 'failed' : 'pending';
    await store.updateTarget(tx, accountId, post.id, t.platform, { status: failed, error: outcome.error, attempts });
    if (failed === 'failed')
      await emitEvent(tx, accountId, 'post.failed', { post_uid: post.uid, platform: t.platform, error: outcome.error, attempts });
  });
}

async function settle(em: EntityManager, accountId: number, post: store.PostRecord): Promise<PublishOutcome> {
  const targets = await store.targetsOf(em, accountId, [post.id]);
  const status = settledStatus(targets);
  if (!status) return { kind: 'pending', pending: targets.filter((t) => t.status === 'pending').length };
  const published = targets.map((t) => t.published_at).filter((d): d is string => d !== null);
  await store.updatePost(em, accountId, post.id, { status, published_at: published.length ? new Date(published.sort()[0]) : null });
  return { kind: 'closed', status };
}
