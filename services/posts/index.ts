// The posts family as the doors and the worker see it.
export {
  listConnections,
  getConnection,
  saveConnection,
  removeConnection,
  createPost,
  getPost,
  listPosts,
  updatePost,
  schedulePost,
  publishPostNow,
  cancelPost,
  deletePost,
  publishDuePost,
  type PostDeps,
  type PostView,
  type PublishOutcome,
} from './posts.js';
export * from './schemas.js';
