import { HINTS, defineOperation } from '../operation.js';
import { pageSchema } from '../../services/platform/pagination.js';
import { noInput } from '../../services/platform/storable.js';
import {
  cancelPost,
  connectionBody,
  connectionSchema,
  createPost,
  deletePost,
  getConnection,
  getPost,
  listConnections,
  listPosts,
  postCreateBody,
  postListQuery,
  postSchema,
  postUpdateBody,
  publishPostNow,
  removeConnection,
  saveConnection,
  scheduleBody,
  schedulePost,
  updatePost,
} from '../../services/posts/index.js';

// Social posts (Endpoints > Leads, templates, forms, flows, posts, occasions: "Posts (posts.view,
// posts.manage): drafts, scheduling, publishing to social platforms. Paths and fields: not shown";
// docs/posts.md). Reads need posts.view on the key's live issuer, writes posts.manage (Authentication
// 4). The tools are on the MCP posts server (scope mcp:posts); what reaches a platform (publish,
// schedule, a post created with a schedule) needs the mcp:publish elevation.

const P = '/api/v3/posts';
const VIEW = 'posts.view';
const MANAGE = 'posts.manage';
const base = { tag: 'Posts', auth: 'rest', issuerRequired: true } as const;
const tools = { servers: ['posts'], scope: 'mcp:posts' } as const;
const one = (status: 200 | 201, description: string) => ({ kind: 'resource', status, description, schema: postSchema }) as const;
const UID = 'The post’s uid (pst_…); another account’s is not found.';
const PLATFORM = 'facebook or instagram.';
const empty = { type: 'object', additionalProperties: false, properties: {} } as const;

export const postOperations = [
  defineOperation({
    ...base,
    name: 'list_post_connections',
    method: 'GET',
    path: `${P}/connections`,
    permission: VIEW,
    summary: 'List the social platforms the account publishes to (a Facebook Page, an Instagram professional account)',
    query: noInput,
    output: {
      kind: 'list',
      status: 200,
      description: 'The connections (tokens are never shown: a hint only)',
      schema: { type: 'object', required: ['connections'], properties: { connections: { type: 'array', items: connectionSchema } } },
    },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }) => listConnections(rc),
  }),
  defineOperation({
    ...base,
    name: 'get_post_connection',
    method: 'GET',
    path: `${P}/connections/{platform}`,
    permission: VIEW,
    summary: 'Read the account’s connection to one platform',
    description: PLATFORM,
    query: noInput,
    output: { kind: 'resource', status: 200, description: 'The connection', schema: connectionSchema },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { platform }) => getConnection(rc, platform),
  }),
  defineOperation({
    ...base,
    name: 'set_post_connection',
    method: 'PUT',
    path: `${P}/connections/{platform}`,
    permission: MANAGE,
    summary: 'Connect a Facebook Page or an Instagram professional account, with the token to publish with',
    description:
      `${PLATFORM} One connection per platform: a second PUT replaces the page and its token. The token is kept like the ` +
      'channels’ provider credentials and never shown back (token_hint only). It is checked by the platform when a post is ' +
      'published: an expired or unauthorised token fails that post with the platform’s reason (code 190 or 200).',
    body: connectionBody,
    output: { kind: 'resource', status: 200, description: 'The connection', schema: connectionSchema },
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc }, { platform, ...body }) => saveConnection(rc, platform, body),
  }),
  defineOperation({
    ...base,
    name: 'delete_post_connection',
    method: 'DELETE',
    path: `${P}/connections/{platform}`,
    permission: MANAGE,
    summary: 'Disconnect a platform (its token is forgotten)',
    description: `${PLATFORM} A post still to publish there fails at its time with the reason no_connection.`,
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Disconnected',
      schema: { type: 'object', required: ['platform', 'deleted'], properties: { platform: { type: 'string' }, deleted: { const: true } } },
    },
    mcp: { ...tools, elevation: 'mcp:delete', annotations: HINTS.remove },
    handler: async ({ rc }, { platform }) => removeConnection(rc, platform),
  }),
  defineOperation({
    ...base,
    name: 'create_post',
    method: 'POST',
    path: P,
    permission: MANAGE,
    summary: 'Write a post: a draft, or scheduled when scheduled_at is given',
    description:
      'text (Facebook’s message, Instagram’s caption), link (Facebook), media (one image, or an Instagram video, by public URL) ' +
      'and the platforms. Every platform’s rules are checked first and every problem named (422; nothing is kept): the text ' +
      'length (Facebook 63,206 characters; Instagram 2,200 and 30 hashtags), Instagram’s need of media, a schedule from 10 ' +
      'minutes to 30 days ahead. A scheduled post needs a connection for each platform. Its schedule is a Temporal workflow ' +
      '(workflow_id post/<account>/<uid>): it publishes at scheduled_at to each platform, retries a transient refusal (1, 2, 4, ' +
      '8 minutes) and records each platform’s post id or refusal; post.published and post.failed tell it per platform.',
    body: postCreateBody,
    output: one(201, 'The post'),
    mcp: { ...tools, elevation: 'mcp:publish', annotations: { ...HINTS.write, openWorldHint: true } },
    handler: async ({ rc, deps }, body) => createPost(rc, deps, body),
  }),
  defineOperation({
    ...base,
    name: 'list_posts',
    method: 'GET',
    path: P,
    permission: VIEW,
    summary: 'List posts, newest first',
    query: postListQuery,
    output: { kind: 'list', status: 200, description: 'A page of posts', schema: pageSchema('posts', postSchema) },
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, query) => listPosts(rc, query),
  }),
  defineOperation({
    ...base,
    name: 'get_post',
    method: 'GET',
    path: `${P}/{uid}`,
    permission: VIEW,
    summary: 'Read a post: its status, and per platform its status, post id and refusal',
    description: UID,
    query: noInput,
    output: one(200, 'The post'),
    mcp: { ...tools, annotations: HINTS.read },
    handler: async ({ rc }, { uid }) => getPost(rc, uid),
  }),
  defineOperation({
    ...base,
    name: 'update_post',
    method: 'PATCH',
    path: `${P}/{uid}`,
    permission: MANAGE,
    summary: 'Change a draft’s, a scheduled or a cancelled post’s text, link, media or platforms',
    description: `${UID} The post is checked whole again (a scheduled one against its time too). A post being published or published is 409.`,
    body: postUpdateBody,
    refusals: { 409: 'the post is publishing, published or failed' },
    output: one(200, 'The post'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc }, { uid, ...body }) => updatePost(rc, uid, body),
  }),
  defineOperation({
    ...base,
    name: 'schedule_post',
    method: 'POST',
    path: `${P}/{uid}/schedule`,
    permission: MANAGE,
    summary: 'Schedule a draft or a cancelled post, or move a scheduled one to another time',
    description: `${UID} scheduled_at from 10 minutes to 30 days ahead; each platform needs a connection.`,
    body: scheduleBody,
    refusals: { 409: 'the post is publishing, published or failed' },
    output: one(200, 'The post, scheduled'),
    mcp: { ...tools, elevation: 'mcp:publish', annotations: { ...HINTS.update, openWorldHint: true } },
    handler: async ({ rc, deps }, { uid, scheduled_at }) => schedulePost(rc, deps, uid, scheduled_at),
  }),
  defineOperation({
    ...base,
    name: 'publish_post',
    method: 'POST',
    path: `${P}/{uid}/publish`,
    permission: MANAGE,
    summary: 'Publish a draft or a scheduled post now',
    description:
      `${UID} The post’s workflow fires at once (a scheduled one’s timer is cut short): the answer is the post as it starts ` +
      'publishing; read it again, or wait for post.published / post.failed, for each platform’s outcome.',
    body: empty,
    refusals: { 409: 'the post is publishing, published or failed' },
    output: one(200, 'The post, publishing'),
    mcp: { ...tools, elevation: 'mcp:publish', annotations: HINTS.send },
    handler: async ({ rc, deps }, { uid }) => publishPostNow(rc, deps, uid),
  }),
  defineOperation({
    ...base,
    name: 'cancel_post',
    method: 'POST',
    path: `${P}/{uid}/cancel`,
    permission: MANAGE,
    summary: 'Cancel a scheduled post before its time (it can be scheduled again)',
    description: UID,
    body: empty,
    refusals: { 409: 'the post is not scheduled (a post being published can no longer be cancelled)' },
    output: one(200, 'The post, cancelled'),
    mcp: { ...tools, elevation: 'mcp:write', annotations: HINTS.update },
    handler: async ({ rc, deps }, { uid }) => cancelPost(rc, deps, uid),
  }),
  defineOperation({
    ...base,
    name: 'delete_post',
    method: 'DELETE',
    path: `${P}/{uid}`,
    permission: MANAGE,
    summary: 'Delete a post (a scheduled one is cancelled; a published one stays on the platform)',
    description: UID,
    refusals: { 409: 'the post is being published' },
    output: {
      kind: 'outcome',
      status: 200,
      description: 'Deleted',
      schema: { type: 'object', required: ['uid', 'deleted'], properties: { uid: { type: 'string' }, deleted: { const: true } } },
    },
    mcp: { ...tools, elevation: 'mcp:delete', annotations: HINTS.remove },
    handler: async ({ rc, deps }, { uid }) => deletePost(rc, deps, uid),
  }),
];
