import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_TIMEOUT_MS, httpRequest, isRecord, type ProviderFailure, type ProviderResult } from '../http.js';
import type { SocialContent, SocialDestination } from '../types.js';

export interface MetaSocialOptions {
  /** e.g. https://graph.facebook.com/v21.0 */
  baseUrl: string;
  timeoutMs?: number;
  /** Instagram container reads before a publish attempt gives the container back to a later one. */
  containerPolls?: number;
  pollIntervalMs?: number;
}

/**
 * Graph codes a later attempt may get past: throttles (4, 17, 32, 613), the temporary ones (1, 2),
 * an answer flagged is_transient, Instagram's "server error; retry" (-1 with 2207001) and "not
 * ready" (9007/2207027). Everything else (a bad parameter 100, a token 190, a permission 200, a
 * publishing limit 9/2207042, a failed container) is final for this post.
 */
const RETRYABLE_CODES = new Set([1, 2, 4, 17, 32, 341, 613, 9007]);
const RETRYABLE_SUBCODES = new Set([2207001, 2207027]);
/** The container expired (24 h): build a new one. */
const EXPIRED_SUBCODE = 2207020;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null);

type Reply = { ok: true; body: Record<string, unknown> } | { ok: false; failure: ProviderFailure; subcode: number | null };

export class MetaSocialClient {
  constructor(private readonly o: MetaSocialOptions) {}

  private async call(method: 'GET' | 'POST', path: string, token: string, body?: Record<string, unknown>): Promise<Reply> {
    const res = await httpRequest(
      `${this.o.baseUrl}${path}`,
      {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}), accept: 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      },
      this.o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    );
    if (!res.ok) return { ok: false, failure: res.failure, subcode: null };
    const { reply } = res;
    if (reply.status >= 200 && reply.status < 300 && isRecord(reply.json)) return { ok: true, body: reply.json };
    const err = isRecord(reply.json) && isRecord(reply.json.error) ? reply.json.error : null;
    if (!err) {
      const permanent = reply.status >= 400 && reply.status < 500 && reply.status !== 429;
      return {
        ok: false,
        subcode: null,
        failure: { ok: false, permanent, code: `http_${reply.status}`, message: reply.text.slice(0, 300), httpStatus: reply.status },
      };
    }
    const code = typeof err.code === 'number' ? err.code : Number(err.code);
    const subcode = typeof err.error_subcode === 'number' ? err.error_subcode : null;
    const transient =
      err.is_transient === true ||
      RETRYABLE_CODES.has(code) ||
      (subcode !== null && RETRYABLE_SUBCODES.has(subcode)) ||
      reply.status >= 500;
    const message = str(err.error_user_msg) ?? str(err.message) ?? `Graph error ${code}`;
    return {
      ok: false,
      subcode,
      failure: {
        ok: false,
        permanent: !transient,
        code: subcode !== null ? `${code}/${subcode}` : String(code),
        message,
        httpStatus: reply.status,
      },
    };
  }

  async publish(
    to: SocialDestination,
    content: SocialContent,
    progress: { containerId: string | null; onContainer(id: string | null): Promise<void> },
  ): Promise<ProviderResult<{ platformPostId: string }>> {
    return to.platform === 'facebook' ? this.publishPage(to, content) : this.publishInstagram(to, content, progress);
  }

  /** A Page post: /feed for text and a link, /photos for an image (the photo's post id is the post's). */
  private async publishPage(to: SocialDestination, c: SocialContent): Promise<ProviderResult<{ platformPostId: string }>> {
    const page = encodeURIComponent(to.externalId);
    const r = c.media
      ? await this.call('POST', `/${page}/photos`, to.accessToken, {
          url: c.media.url,
          ...(c.text ? { caption: c.text } : {}),
          published: true,
        })
      : await this.call('POST', `/${page}/feed`, to.accessToken, {
          ...(c.text ? { message: c.text } : {}),
          ...(c.link ? { link: c.link } : {}),
          published: true,
        });
    if (!r.ok) return r.failure;
    const id = str(r.body.post_id) ?? str(r.body.id);
    if (!id) return { ok: false, permanent: false, code: 'malformed_answer', message: 'The Graph API answered without a post id.' };
    return { ok: true, value: { platformPostId: id } };
  }

  /**
   * Instagram: create a container (or take the one a previous attempt built), read its status_code
   * until FINISHED, then media_publish. ERROR is final with its subcode; EXPIRED drops the container
   * so the next attempt builds a new one; still IN_PROGRESS after the polls is left to a later attempt.
   */
  private async publishInstagram(
    to: SocialDestination,
    c: SocialContent,
    progress: { containerId: string | null; onContainer(id: string | null): Promise<void> },
  ): Promise<ProviderResult<{ platformPostId: string }>> {
    const ig = encodeURIComponent(to.externalId);
    let container = progress.containerId;
    if (!container) {
      if (!c.media)
        return { ok: false, permanent: true, code: 'no_media', message: 'Instagram publishes no post without an image or a video.' };
      const r = await this.call('POST', `/${ig}/media`, to.accessToken, {
        ...(c.media.type === 'image' ? { image_url: c.media.url } : { video_url: c.media.url, media_type: 'REELS' }),
        ...(c.text ? { caption: c.text } : {}),
        ...(c.media.altText && c.media.type === 'image' ? { alt_text: c.media.altText } : {}),
      });
      if (!r.ok) return r.failure;
      container = str(r.body.id);
      if (!container)
        return { ok: false, permanent: false, code: 'malformed_answer', message: 'The Graph API answered without a container id.' };
      await progress.onContainer(container);
    }
    const polls = this.o.containerPolls ?? 10;
    let status: string | null = null;
    let detail: string | null = null;
    for (let i = 0; i < polls; i++) {
      const r = await this.call('GET', `/${encodeURIComponent(container)}?fields=status_code,status`, to.accessToken);
      if (!r.ok) return r.failure;
      status = str(r.body.status_code);
      detail = str(r.body.status);
      if (status !== 'IN_PROGRESS') break;
      await sleep(this.o.pollIntervalMs ?? 1000);
    }
    if (status === 'IN_PROGRESS')
      return { ok: false, permanent: false, code: 'container_in_progress', message: 'The media is still being processed.' };
    if (status === 'EXPIRED') {
      await progress.onContainer(null);
      return {
        ok: false,
        permanent: false,
        code: `-2/${EXPIRED_SUBCODE}`,
        message: 'The media container expired before it was published; a new one is built.',
      };
    }
    if (status === 'ERROR') {
      const sub = /(\d{7})/.exec(detail ?? '')?.[1];
      return {
        ok: false,
        permanent: true,
        code: sub ? `-1/${sub}` : 'container_error',
        message: `Instagram could not build the media: ${detail ?? 'ERROR'}.`,
      };
    }
    if (status !== 'FINISHED' && status !== 'PUBLISHED')
      return { ok: false, permanent: false, code: 'malformed_answer', message: `Unknown container status ${status ?? '(none)'}.` };
    const p = await this.call('POST', `/${ig}/media_publish`, to.accessToken, { creation_id: container });
    if (!p.ok) {
      if (p.subcode === EXPIRED_SUBCODE) await progress.onContainer(null);
      return p.failure;
    }
    const id = str(p.body.id);
    if (!id) return { ok: false, permanent: false, code: 'malformed_answer', message: 'The Graph API answered without a media id.' };
    return { ok: true, value: { platformPostId: id } };
  }
}
