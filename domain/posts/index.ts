// Social posts (docs/posts.md): the rules a post must meet before it is stored, so a schedule the
// platform would refuse, or text it would cut, is a 422 at the request rather than a failure at
// the publish time. The figures are the platforms' own (notes §4: Facebook Pages API, Instagram
// content publishing); where the sources disagree the strictest is taken.

export const POST_PLATFORMS = ['facebook', 'instagram'] as const;
export type PostPlatform = (typeof POST_PLATFORMS)[number];

/** A post as a whole: Buffer's and Publer's words. partially_published: some platforms took it, some refused. */
export const POST_STATUSES = ['draft', 'scheduled', 'publishing', 'published', 'partially_published', 'failed', 'cancelled'] as const;
export type PostStatus = (typeof POST_STATUSES)[number];

/** One platform of a post. */
export const TARGET_STATUSES = ['pending', 'published', 'failed'] as const;
export type TargetStatus = (typeof TARGET_STATUSES)[number];

export const MEDIA_TYPES = ['image', 'video'] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

export interface PostMedia {
  type: MediaType;
  url: string;
  alt_text?: string | null;
}

export interface PostContent {
  text: string | null;
  link: string | null;
  media: PostMedia[];
}

export interface PlatformRules {
  /** Characters of the text (code points, as Meta counts). */
  maxText: number;
  maxHashtags: number | null;
  /** A post needs media (Instagram publishes no text-only feed post). */
  needsMedia: boolean;
  maxMedia: number;
  mediaTypes: readonly MediaType[];
  /** A link field of its own (Instagram ignores links in captions). */
  takesLink: boolean;
  /** The schedule window from now. */
  minLeadSeconds: number;
  maxLeadDays: number;
}

/**
 * Facebook: /feed's message up to 63,206 characters; scheduled_publish_time from 10 minutes to 30
 * days ahead (the posts guide; the 75 days of the feed reference is unconfirmed). Instagram: caption
 * 2,200 characters and 30 hashtags, one image or video per container here (carousels are not
 * offered yet); the platform has no native schedule, so its window is the one a scheduler keeping
 * its own queue is held to by its Facebook twin: 10 minutes to 30 days, the strictest of the
 * sources.
 */
export const PLATFORM_RULES: Record<PostPlatform, PlatformRules> = {
  facebook: {
    maxText: 63_206,
    maxHashtags: null,
    needsMedia: false,
    maxMedia: 1,
    mediaTypes: ['image'],
    takesLink: true,
    minLeadSeconds: 600,
    maxLeadDays: 30,
  },
  instagram: {
    maxText: 2_200,
    maxHashtags: 30,
    needsMedia: true,
    maxMedia: 1,
    mediaTypes: ['image', 'video'],
    takesLink: false,
    minLeadSeconds: 600,
    maxLeadDays: 30,
  },
};

const chars = (s: string) => Array.from(s).length;
const hashtags = (s: string) => (s.match(/(^|\s)#[^\s#]+/gu) ?? []).length;

export type FieldErrors = Record<string, string[]>;

/** What keeps the content off one of its platforms: every problem, keyed by field. */
export function contentProblems(content: PostContent, platforms: readonly PostPlatform[]): FieldErrors {
  const errors: FieldErrors = {};
  const add = (f: string, m: string) => (errors[f] ??= []).push(m);
  if (!content.text && !content.link && content.media.length === 0) add('text', 'A post needs text, a link or media.');
  for (const p of platforms) {
    const r = PLATFORM_RULES[p];
    const name = p === 'facebook' ? 'Facebook' : 'Instagram';
    if (content.text && chars(content.text) > r.maxText)
      add('text', `${name} takes at most ${r.maxText} characters; this text has ${chars(content.text)}.`);
    if (content.text && r.maxHashtags !== null && hashtags(content.text) > r.maxHashtags)
      add('text', `${name} takes at most ${r.maxHashtags} hashtags; this text has ${hashtags(content.text)}.`);
    if (r.needsMedia && content.media.length === 0) add('media', `${name} publishes no text-only post: add an image or a video.`);
    if (content.media.length > r.maxMedia) add('media', `${name} takes at most ${r.maxMedia} media item per post here.`);
    for (const m of content.media)
      if (!r.mediaTypes.includes(m.type)) add('media', `${name} posts take ${r.mediaTypes.join(' or ')} media here, not ${m.type}.`);
    if (content.link && !r.takesLink && content.media.length === 0) add('link', `${name} does not publish links.`);
  }
  return errors;
}

/** Why `at` is outside every chosen platform's window, or null when each accepts it. */
export function scheduleProblem(at: Date, platforms: readonly PostPlatform[], now: Date): string | null {
  const lead = (at.getTime() - now.getTime()) / 1000;
  if (lead <= 0) return 'The schedule is in the past; choose a time at least 10 minutes ahead, or publish now.';
  for (const p of platforms) {
    const r = PLATFORM_RULES[p];
    const name = p === 'facebook' ? 'Facebook' : 'Instagram';
    if (lead < r.minLeadSeconds) return `${name} takes a schedule at least ${r.minLeadSeconds / 60} minutes ahead.`;
    if (lead > r.maxLeadDays * 86_400) return `${name} takes a schedule at most ${r.maxLeadDays} days ahead.`;
  }
  return null;
}

/** A post's status from its targets' (null while some platform is still to be published). */
export function settledStatus(targets: readonly { status: TargetStatus }[]): PostStatus | null {
  if (targets.some((t) => t.status === 'pending')) return null;
  const published = targets.filter((t) => t.status === 'published').length;
  if (published === targets.length) return 'published';
  return published > 0 ? 'partially_published' : 'failed';
}

/** The publish attempts of one scheduled post before a transient failure counts as final. */
export const MAX_PUBLISH_ATTEMPTS = 5;
/** The wait before attempt n+1 (n from 1): 1, 2, 4, 8 minutes. */
export const retryDelayMs = (attempt: number) => 60_000 * 2 ** (attempt - 1);
