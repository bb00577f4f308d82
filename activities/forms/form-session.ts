import { Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { expireFormSession, sendFormPrompt, takeFormReply } from '../../services/forms/index.js';
import type { FormPrompt, FormReply } from '../../workflows/forms/form-session.js';

// The form session workflow's activities: each step is one service call (services/forms/sessions.ts),
// safe to retry (a prompt noted as sent is not sent again; a reply already read is ignored).

export interface FormSessionActivityDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

export function createFormSessionActivities(deps: FormSessionActivityDeps) {
  const stepDeps = () => ({ ...deps, temporal: Context.current().client });
  return {
    async sendFormPrompt(input: { accountId: number; sessionUid: string; prompt: FormPrompt }) {
      return sendFormPrompt(stepDeps(), input);
    },
    async takeFormReply(input: { accountId: number; sessionUid: string; reply: FormReply }) {
      return takeFormReply(stepDeps(), input);
    },
    async expireFormSession(input: { accountId: number; sessionUid: string; reason: string }) {
      return expireFormSession(stepDeps(), input);
    },
  };
}

export type FormSessionActivities = ReturnType<typeof createFormSessionActivities>;
