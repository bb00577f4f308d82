import type { FromSchema } from 'json-schema-to-ts';
import { MEDIA_TYPES, POST_PLATFORMS, POST_STATUSES, TARGET_STATUSES } from '../../domain/posts/index.js';

// The posts family's request and answer schemas: the operations state them (api/posts/) and the
// services take their types from them. The fields are those a user of the Graph publishing APIs
// or of Buffer expects: text (Facebook's message, Instagram's caption), link, media by public URL,
// the platforms, scheduled_at.

const HTTP_URL = '^https?://[^ \\t\\r\\n]+$';

const media = {
  type: 'object',
  additionalProperties: false,
  required: ['type', 'url'],
  properties: {
    type: { enum: MEDIA_TYPES, description: 'image (Facebook and Instagram) or video (Instagram, published as a reel)' },
    url: {
      type: 'string',
      maxLength: 2048,
      pattern: HTTP_URL,
      description: 'A public http(s) URL: the platform fetches the file itself when it publishes',
    },
    alt_text: { type: ['string', 'null'], maxLength: 1000, description: 'Instagram images: the alternative text' },
  },
} as const;

const contentProperties = {
  text: {
    type: ['string', 'null'],
    maxLength: 63_206,
    description: 'The post’s text: Facebook’s message (up to 63,206 characters), Instagram’s caption (up to 2,200 and 30 hashtags)',
  },
  link: { type: ['string', 'null'], maxLength: 2048, pattern: HTTP_URL, description: 'Facebook: a link the post shares' },
  media: { type: 'array', maxItems: 10, items: media, description: 'At most one image or video per post here (no carousels)' },
  platforms: {
    type: 'array',
    minItems: 1,
    maxItems: 2,
    uniqueItems: true,
    items: { enum: POST_PLATFORMS },
    description: 'Where it is published: the account’s connections of these platforms',
  },
} as const;

const SCHEDULED_AT = {
  type: 'string',
  format: 'date-time',
  description: 'When to publish (ISO 8601): from 10 minutes to 30 days ahead, the platforms’ window',
} as const;

export const postCreateBody = {
  type: 'object',
  additionalProperties: false,
  required: ['platforms'],
  properties: {
    ...contentProperties,
    scheduled_at: { ...SCHEDULED_AT, type: ['string', 'null'], description: `${SCHEDULED_AT.description}; absent or null: a draft` },
  },
} as const;
export type PostCreateBody = FromSchema<typeof postCreateBody>;

export const postUpdateBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: contentProperties,
} as const;
export type PostUpdateBody = FromSchema<typeof postUpdateBody>;

export const scheduleBody = {
  type: 'object',
  additionalProperties: false,
  required: ['scheduled_at'],
  properties: { scheduled_at: SCHEDULED_AT },
} as const;

export const postListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: POST_STATUSES },
    page: { type: 'integer', minimum: 1, maximum: 2_147_483_647 },
    per_page: { type: 'integer', minimum: 1, maximum: 2_147_483_647, description: 'default 20; above 100 reads as 100' },
  },
} as const;

const refusal = {
  type: ['object', 'null'],
  description: 'The platform’s refusal: its error code (code/subcode), subcode and message',
  properties: {
    code: { type: 'string' },
    subcode: { type: ['integer', 'null'] },
    message: { type: 'string' },
    transient: { type: 'boolean' },
  },
} as const;

const target = {
  type: 'object',
  required: ['platform', 'status', 'platform_post_id', 'error', 'attempts', 'published_at'],
  properties: {
    platform: { enum: POST_PLATFORMS },
    status: { enum: TARGET_STATUSES },
    platform_post_id: { type: ['string', 'null'], description: 'Facebook `<page>_<post>`, the Instagram media id' },
    error: refusal,
    attempts: { type: 'integer' },
    published_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const postSchema = {
  type: 'object',
  required: [
    'uid',
    'status',
    'text',
    'link',
    'media',
    'platforms',
    'scheduled_at',
    'published_at',
    'targets',
    'workflow_id',
    'created_at',
    'updated_at',
  ],
  properties: {
    uid: { type: 'string' },
    status: { enum: POST_STATUSES, description: 'partially_published: some platforms took it and some refused' },
    text: { type: ['string', 'null'] },
    link: { type: ['string', 'null'] },
    media: { type: 'array', items: media },
    platforms: { type: 'array', items: { enum: POST_PLATFORMS } },
    scheduled_at: { type: ['string', 'null'], format: 'date-time' },
    published_at: { type: ['string', 'null'], format: 'date-time' },
    targets: { type: 'array', items: target, description: 'One per platform: its own status, post id and refusal' },
    workflow_id: { type: ['string', 'null'], description: 'The Temporal workflow holding its schedule: post/<account>/<uid>' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const connectionBody = {
  type: 'object',
  additionalProperties: false,
  required: ['external_id', 'access_token'],
  properties: {
    external_id: {
      type: 'string',
      pattern: '^[0-9]{1,32}$',
      examples: ['104857600000001'],
      description: 'The Facebook Page id, or the Instagram professional account’s id (the IG user id)',
    },
    access_token: {
      type: 'string',
      minLength: 8,
      maxLength: 4096,
      description: 'A Page access token (instagram: one with instagram_content_publish); never shown back',
    },
    name: { type: ['string', 'null'], maxLength: 160 },
  },
} as const;
export type ConnectionBody = FromSchema<typeof connectionBody>;

export const connectionSchema = {
  type: 'object',
  required: ['id', 'platform', 'external_id', 'name', 'token_hint', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'integer' },
    platform: { enum: POST_PLATFORMS },
    external_id: { type: 'string' },
    name: { type: ['string', 'null'] },
    token_hint: { type: 'string', description: 'The token’s first and last four characters' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;
