import { defineEntity, p } from '@mikro-orm/core';
import { timestamps } from './columns.js';
import { POST_PLATFORMS, POST_STATUSES, TARGET_STATUSES, type PostMedia } from '../domain/posts/index.js';

// Social posts (docs/posts.md). A connection is an account's page on one platform with the token
// the service publishes with (kept as the channels keep their provider config: in the row, never
// shown back but for a hint). A post is written once and published to each of its targets, one row
// per platform with that platform's own status, post id and refusal.

export const SocialConnection = defineEntity({
  name: 'SocialConnection',
  tableName: 'social_connections',
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: p.integer(),
    platform: p.enum(POST_PLATFORMS),
    /** The Facebook Page id or the Instagram professional account (IG user) id. */
    externalId: p.string().length(64),
    name: p.string().length(160).nullable(),
    accessToken: p.text(),
    ...timestamps(),
  },
  uniques: [{ name: 'social_connections_account_platform_unique', properties: ['accountId', 'platform'] }],
});

export const Post = defineEntity({
  name: 'Post',
  tableName: 'posts',
  properties: {
    id: p.integer().primary().autoincrement(),
    uid: p.string().length(32).unique(),
    accountId: p.integer(),
    status: p.enum(POST_STATUSES).default('draft'),
    text: p.text().nullable(),
    link: p.string().length(2048).nullable(),
    media: p.json<PostMedia[]>(),
    scheduledAt: p.datetime().nullable(),
    publishedAt: p.datetime().nullable(),
    ...timestamps(),
  },
  indexes: [{ name: 'posts_account_id_index', properties: ['accountId', 'id'] }],
});

export const PostTarget = defineEntity({
  name: 'PostTarget',
  tableName: 'post_targets',
  properties: {
    postId: p.integer().primary(),
    platform: p.enum(POST_PLATFORMS).primary(),
    accountId: p.integer(),
    status: p.enum(TARGET_STATUSES).default('pending'),
    /** The platform's id of the published post (Facebook `<page>_<post>`, the Instagram media id). */
    platformPostId: p.string().length(128).nullable(),
    /** Instagram: the media container being built, reused by a retry until it expires. */
    containerId: p.string().length(128).nullable(),
    /** The platform's last refusal: its code, subcode and message. */
    error: p.json<Record<string, unknown>>().nullable(),
    attempts: p.integer().default(0),
    publishedAt: p.datetime().nullable(),
    ...timestamps(),
  },
});
