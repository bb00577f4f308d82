import type { MikroORM } from '@mikro-orm/postgresql';
import type { Logger } from '../../logger.js';
import type { SocialPublisher } from '../../providers/index.js';
import { publishDuePost, type PublishOutcome } from '../../services/posts/index.js';

export interface PostActivityDeps {
  orm: MikroORM;
  log: Logger;
  social: () => SocialPublisher;
}

export type { PublishOutcome };

export function createPostActivities(deps: PostActivityDeps) {
  return {
    /**
     * One publish attempt of a scheduled post (services/posts publishDuePost). Idempotent: a
     * platform already published is skipped, an Instagram container is reused, a post no longer
     * scheduled is left alone.
     */
    async publishDuePost(input: { accountId: number; postUid: string; final: boolean }): Promise<PublishOutcome> {
      const out = await publishDuePost(deps.orm.em.fork(), deps.social(), input);
      deps.log.info({ accountId: input.accountId, post: input.postUid, final: input.final, ...out }, 'post publish attempt');
      return out;
    },
  };
}

export type PostActivities = ReturnType<typeof createPostActivities>;
