// Facebook Pages and Instagram content publishing on the Graph API (notes §4), under
// /graph/{version}: POST /{page}/feed and /{page}/photos, GET /{page}/scheduled_posts, POST
// /{ig-user}/media (a container), GET /{container}?fields=status_code,status, POST
// /{ig-user}/media_publish, GET /{ig-user}/content_publishing_limit, GET /{post-or-media}. Its
// rules are Meta's: scheduled_publish_time from 10 minutes to maxScheduleDays (30) ahead, a
// container that is IN_PROGRESS for `containerPolls` reads then FINISHED, publishable only then and
// expired after 24 h of the simulator's clock, at most `publishLimit` (50) Instagram posts per
// rolling 24 h. Every refusal is the Graph error envelope. Tokens: any token is accepted but those
// starting `expired` (190) or `noperm` (200). Test controls under /_sim/social: config, clock,
// faults (the next N calls to one page or IG user), and what was published.
import { Router } from '@koa/router';
import type { Context as KoaContext } from 'koa';
import { randomBytes } from 'node:crypto';
import { BodyError, readJson, readRaw } from './body.js';
import { isObj } from './graph-errors.js';

const DAY_MS = 86_400_000;

/** A routed request: Koa's context with the path's parameters. */
type Context = KoaContext & { params: Record<string, string> };

export type ContainerStatus = 'IN_PROGRESS' | 'FINISHED' | 'ERROR' | 'EXPIRED' | 'PUBLISHED';

export interface SimContainer {
  id: string;
  igUser: string;
  mediaType: 'IMAGE' | 'VIDEO' | 'REELS';
  url: string;
  caption: string;
  createdAt: number;
  polls: number;
  status: ContainerStatus;
  /** ERROR's subcode (2207003 download timed out, 2207004 too large, …). */
  errorSubcode: number | null;
}

export interface SimSocialPost {
  id: string;
  platform: 'facebook' | 'instagram';
  owner: string;
  message: string;
  link: string | null;
  mediaUrl: string | null;
  /** false: a Facebook post scheduled natively, published when the clock passes `scheduledAt`. */
  published: boolean;
  scheduledAt: number | null;
  createdAt: number;
}

/** Faults of the next calls to one page or IG user (null: any): each becomes its Graph error. */
export const SOCIAL_FAULT_KINDS = [
  'transient', // 500, code 2, is_transient
  'rate_limit', // 400, code 4 (application request limit), is_transient
  'token_expired', // 401, code 190
  'permission', // 403, code 200
  'container_error', // the next container goes to ERROR with `subcode` (default 2207003)
  'container_slow', // the next container stays IN_PROGRESS for `polls` reads (default 100)
] as const;
export type SocialFaultKind = (typeof SOCIAL_FAULT_KINDS)[number];

export interface SocialFault {
  id: number;
  kind: SocialFaultKind;
  owner: string | null;
  remaining: number;
  subcode: number | null;
  polls: number | null;
}

export interface SocialState {
  posts: SimSocialPost[];
  containers: Map<string, SimContainer>;
  faults: SocialFault[];
  /** Added to Date.now(): a test moves the simulator's clock without waiting. */
  clockOffsetMs: number;
  containerPolls: number;
  publishLimit: number;
  maxScheduleDays: number;
  /** Every Graph call, for tests to count (method path). */
  calls: string[];
  seq: number;
}

export function createSocialState(): SocialState {
  return {
    posts: [],
    containers: new Map(),
    faults: [],
    clockOffsetMs: 0,
    containerPolls: 1,
    publishLimit: 50,
    maxScheduleDays: 30,
    calls: [],
    seq: 0,
  };
}

export function resetSocialState(s: SocialState): void {
  Object.assign(s, createSocialState());
}

const trace = () => randomBytes(12).toString('base64url');

interface GraphErr {
  status: number;
  code: number;
  message: string;
  subcode?: number;
  transient?: boolean;
  title?: string;
}

function answerError(ctx: Context, e: GraphErr): void {
  ctx.status = e.status;
  const error: Record<string, unknown> = { message: e.message, type: 'OAuthException', code: e.code, fbtrace_id: trace() };
  if (e.subcode !== undefined) error.error_subcode = e.subcode;
  if (e.transient !== undefined) error.is_transient = e.transient;
  if (e.title) {
    error.error_user_title = e.title;
    error.error_user_msg = e.message;
  }
  ctx.body = { error };
}

const badParam = (message: string, subcode?: number): GraphErr => ({ status: 400, code: 100, message: `(#100) ${message}`, subcode });

function numericId(v: string | undefined): v is string {
  return typeof v === 'string' && /^[0-9]{1,32}$/.test(v);
}

export function socialRouter(s: SocialState): Router {
  const r = new Router({ prefix: '/graph/:version' });
  const now = () => Date.now() + s.clockOffsetMs;
  const newId = () => `${17_800_000_000_000_000n + BigInt(++s.seq)}`;

  /** Fires natively scheduled Facebook posts whose time the clock has passed. */
  const tick = () => {
    for (const p of s.posts) if (!p.published && p.scheduledAt !== null && p.scheduledAt <= now()) p.published = true;
    for (const c of s.containers.values()) if (c.status !== 'PUBLISHED' && now() - c.createdAt > DAY_MS) c.status = 'EXPIRED';
  };

  const takeFault = (owner: string, kinds: readonly SocialFaultKind[]): SocialFault | null => {
    const f = s.faults.find((x) => kinds.includes(x.kind) && (x.owner === null || x.owner === owner) && x.remaining !== 0);
    if (!f) return null;
    if (f.remaining > 0) f.remaining--;
    return f;
  };

  /** Token and the armed call faults; the error to answer, or null to go on. */
  const gate = (ctx: Context, owner: string, token: string | null): GraphErr | null => {
    s.calls.push(`${ctx.method} ${ctx.path}`);
    tick();
    if (!token) return { status: 400, code: 104, message: 'An access token is required to request this resource.' };
    if (token.startsWith('expired'))
      return { status: 401, code: 190, subcode: 463, message: 'Error validating access token: Session has expired.' };
    if (token.startsWith('noperm'))
      return { status: 403, code: 200, message: '(#200) The user hasn’t authorized the application to perform this action' };
    const f = takeFault(owner, ['transient', 'rate_limit', 'token_expired', 'permission']);
    if (!f) return null;
    if (f.kind === 'transient')
      return { status: 500, code: 2, transient: true, message: 'An unexpected error has occurred. Please retry your request later.' };
    if (f.kind === 'rate_limit') return { status: 400, code: 4, transient: true, message: '(#4) Application request limit reached' };
    if (f.kind === 'token_expired')
      return { status: 401, code: 190, subcode: 463, message: 'Error validating access token: Session has expired.' };
    return { status: 403, code: 200, message: '(#200) The user hasn’t authorized the application to perform this action' };
  };

  /** The body's fields, JSON or form-encoded (the Graph API takes both), and the token from the header or the access_token field. */
  const params = async (ctx: Context): Promise<{ fields: Record<string, unknown>; token: string | null }> => {
    let fields: Record<string, unknown> = {};
    if ((ctx.get('content-type') || '').includes('application/json')) {
      const b = await readJson(ctx);
      if (!isObj(b)) throw new BodyError('The request body must be a JSON object.', 400);
      fields = b;
    } else if (ctx.method !== 'GET') {
      const raw = (await readRaw(ctx)).toString('utf8');
      fields = Object.fromEntries(new URLSearchParams(raw));
    }
    for (const [k, v] of Object.entries(ctx.query)) if (typeof v === 'string' && fields[k] === undefined) fields[k] = v;
    const auth = ctx.get('authorization');
    const token = auth.startsWith('Bearer ') ? auth.slice(7) : typeof fields.access_token === 'string' ? fields.access_token : null;
    return { fields, token };
  };

  const run = (handler: (ctx: Context, f: Record<string, unknown>) => GraphErr | void) => async (ctx: Context) => {
    let p: Awaited<ReturnType<typeof params>>;
    try {
      p = await params(ctx);
    } catch (err) {
      if (err instanceof BodyError) return answerError(ctx, badParam(err.message));
      throw err;
    }
    const owner = String(ctx.params.id ?? '');
    const refused = gate(ctx, owner, p.token);
    if (refused) return answerError(ctx, refused);
    const e = handler(ctx, p.fields);
    if (e) answerError(ctx, e);
  };

  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

  /** scheduled_publish_time: unix seconds or ISO 8601 (strtotime strings are not read here). */
  const scheduleOf = (v: unknown): number | null => {
    if (v === undefined || v === null || v === '') return null;
    if (typeof v === 'number' || /^[0-9]+$/.test(String(v))) return Number(v) * 1000;
    const t = Date.parse(String(v));
    return Number.isNaN(t) ? NaN : t;
  };

  const feed = (ctx: Context, f: Record<string, unknown>, photo: boolean): GraphErr | void => {
    const page = ctx.params.id;
    if (!numericId(page)) return badParam(`Unsupported post request. Object with ID '${page}' does not exist.`);
    const message = str(photo ? (f.caption ?? f.message) : f.message) ?? '';
    const link = photo ? null : str(f.link);
    const url = photo ? str(f.url) : null;
    if (photo && !url) return badParam('Param url is required.');
    if (!photo && !message && !link) return badParam('Param message or link is required.');
    if (Array.from(message).length > 63_206) return badParam('Param message must be at most 63206 characters long.');
    const published = !(f.published === false || f.published === 'false');
    const at = scheduleOf(f.scheduled_publish_time);
    if (Number.isNaN(at)) return badParam('Param scheduled_publish_time is not a valid time.');
    if (at !== null) {
      if (published) return badParam('Param scheduled_publish_time can only be set with published=false.');
      const lead = at - now();
      if (lead < 10 * 60_000 || lead > s.maxScheduleDays * DAY_MS)
        return badParam(
          `The specified scheduled publish time is invalid: it must be between 10 minutes and ${s.maxScheduleDays} days from now.`,
        );
    }
    const id = `${page}_${newId()}`;
    s.posts.push({
      id,
      platform: 'facebook',
      owner: page,
      message,
      link,
      mediaUrl: url,
      published: published || false,
      scheduledAt: at,
      createdAt: now(),
    });
    ctx.status = 200;
    ctx.body = photo ? { id: newId(), post_id: id } : { id };
  };

  r.post(
    '/:id/feed',
    run((ctx, f) => feed(ctx, f, false)),
  );
  r.post(
    '/:id/photos',
    run((ctx, f) => feed(ctx, f, true)),
  );

  r.get(
    '/:id/scheduled_posts',
    run((ctx) => {
      const data = s.posts
        .filter((p) => p.platform === 'facebook' && p.owner === ctx.params.id && !p.published && p.scheduledAt !== null)
        .map((p) => ({ id: p.id, message: p.message, scheduled_publish_time: Math.floor((p.scheduledAt as number) / 1000) }));
      ctx.body = { data };
    }),
  );

  r.post(
    '/:id/media',
    run((ctx, f) => {
      const ig = ctx.params.id;
      if (!numericId(ig)) return badParam(`Unsupported post request. Object with ID '${ig}' does not exist.`);
      const image = str(f.image_url);
      const video = str(f.video_url);
      const mediaType = str(f.media_type);
      if (!image && !video) return badParam('Param image_url or video_url is required.');
      if (image && video) return badParam('Only one of image_url and video_url may be given.');
      if (video && mediaType !== 'REELS' && mediaType !== 'VIDEO') return badParam('Param media_type must be REELS for a video.');
      const url = (image ?? video) as string;
      if (!/^https?:\/\//.test(url)) return badParam('Param image_url must be a public http(s) URL.', 2207052);
      const caption = str(f.caption) ?? '';
      if (Array.from(caption).length > 2200) return badParam('The caption may have up to 2200 characters.', 2207010);
      if ((caption.match(/(^|\s)#[^\s#]+/gu) ?? []).length > 30) return badParam('The caption may have up to 30 hashtags.', 2207010);
      const err = takeFault(ig, ['container_error']);
      const slow = takeFault(ig, ['container_slow']);
      const c: SimContainer = {
        id: newId(),
        igUser: ig,
        mediaType: video ? 'REELS' : 'IMAGE',
        url,
        caption,
        createdAt: now(),
        polls: -(slow?.polls ?? 0),
        status: 'IN_PROGRESS',
        errorSubcode: err ? (err.subcode ?? 2207003) : null,
      };
      s.containers.set(c.id, c);
      ctx.body = { id: c.id };
    }),
  );

  r.post(
    '/:id/media_publish',
    run((ctx, f) => {
      const ig = ctx.params.id;
      const creation = str(f.creation_id);
      if (!creation) return badParam('Param creation_id is required.');
      const c = s.containers.get(creation);
      if (!c || c.igUser !== ig)
        return {
          status: 400,
          code: 24,
          subcode: 2207008,
          message: 'The media builder with the given creation id was not found.',
          title: 'Media builder not found',
        };
      if (c.status === 'EXPIRED')
        return {
          status: 400,
          code: -2,
          subcode: 2207020,
          message: 'The media container has expired; create a new one.',
          title: 'Media expired',
        };
      if (c.status === 'PUBLISHED') return { status: 400, code: 24, subcode: 2207008, message: 'The media has already been published.' };
      if (c.status !== 'FINISHED')
        return {
          status: 400,
          code: 9007,
          subcode: 2207027,
          message: 'The media is not ready for publishing, please wait for a moment.',
          title: 'Media not ready',
        };
      const since = now() - DAY_MS;
      const used = s.posts.filter((p) => p.platform === 'instagram' && p.owner === ig && p.createdAt > since).length;
      if (used >= s.publishLimit)
        return {
          status: 400,
          code: 9,
          subcode: 2207042,
          message: 'You have reached the maximum number of posts that is allowed for this account in a 24 hour period.',
          title: 'Publishing limit reached',
        };
      c.status = 'PUBLISHED';
      const id = newId();
      s.posts.push({
        id,
        platform: 'instagram',
        owner: ig,
        message: c.caption,
        link: null,
        mediaUrl: c.url,
        published: true,
        scheduledAt: null,
        createdAt: now(),
      });
      ctx.body = { id };
    }),
  );

  r.get(
    '/:id/content_publishing_limit',
    run((ctx) => {
      const since = now() - DAY_MS;
      const used = s.posts.filter((p) => p.platform === 'instagram' && p.owner === ctx.params.id && p.createdAt > since).length;
      ctx.body = { data: [{ quota_usage: used, config: { quota_total: s.publishLimit, quota_duration: 86_400 } }] };
    }),
  );

  // A container's status (each read moves an IN_PROGRESS one on), or a published post or media.
  r.get(
    '/:id',
    run((ctx) => {
      const id = ctx.params.id;
      const c = s.containers.get(id);
      if (c) {
        if (c.status === 'IN_PROGRESS') {
          c.polls++;
          if (c.polls >= s.containerPolls) c.status = c.errorSubcode !== null ? 'ERROR' : 'FINISHED';
        }
        const status =
          c.status === 'ERROR'
            ? `Error: ${c.errorSubcode}`
            : c.status === 'FINISHED'
              ? 'Finished: Media has been uploaded and it is ready to be published.'
              : c.status;
        ctx.body = { id, status_code: c.status, status };
        return;
      }
      const p = s.posts.find((x) => x.id === id);
      if (!p) return badParam(`Unsupported get request. Object with ID '${id}' does not exist.`, 33);
      ctx.body = {
        id: p.id,
        message: p.message,
        is_published: p.published,
        ...(p.scheduledAt ? { scheduled_publish_time: Math.floor(p.scheduledAt / 1000) } : {}),
      };
    }),
  );
  return r;
}

/** Test controls: /_sim/social/{config,clock,faults,posts,containers}. */
export function socialSimRouter(s: SocialState): Router {
  const r = new Router({ prefix: '/_sim/social' });
  r.post('/config', async (ctx) => {
    const b = await readJson(ctx);
    if (!isObj(b)) throw new BodyError('config must be an object', 400);
    for (const k of ['containerPolls', 'publishLimit', 'maxScheduleDays'] as const) if (typeof b[k] === 'number') s[k] = b[k];
    ctx.body = { containerPolls: s.containerPolls, publishLimit: s.publishLimit, maxScheduleDays: s.maxScheduleDays };
  });
  r.post('/clock', async (ctx) => {
    const b = await readJson(ctx);
    if (!isObj(b) || typeof b.advance_ms !== 'number') throw new BodyError('advance_ms is required', 400);
    s.clockOffsetMs += b.advance_ms;
    ctx.body = { offset_ms: s.clockOffsetMs };
  });
  r.post('/faults', async (ctx) => {
    const b = await readJson(ctx);
    if (!isObj(b) || !(SOCIAL_FAULT_KINDS as readonly unknown[]).includes(b.kind))
      throw new BodyError(`kind must be one of ${SOCIAL_FAULT_KINDS.join(', ')}`, 400);
    const f: SocialFault = {
      id: ++s.seq,
      kind: b.kind as SocialFaultKind,
      owner: typeof b.owner === 'string' ? b.owner : null,
      remaining: typeof b.count === 'number' ? b.count : 1,
      subcode: typeof b.subcode === 'number' ? b.subcode : null,
      polls: typeof b.polls === 'number' ? b.polls : null,
    };
    s.faults.push(f);
    ctx.status = 201;
    ctx.body = f;
  });
  r.delete('/faults', (ctx) => {
    s.faults.length = 0;
    ctx.status = 204;
  });
  r.get('/posts', (ctx) => {
    ctx.body = { posts: s.posts, calls: s.calls };
  });
  r.get('/containers', (ctx) => {
    ctx.body = { containers: [...s.containers.values()] };
  });
  r.post('/reset', (ctx) => {
    resetSocialState(s);
    ctx.status = 204;
  });
  return r;
}
