import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { CustomerReply } from '../messaging/index.js';
import { signalWorkflow } from '../../temporal/starters.js';
import { flowSessionStarter, flowSessionWorkflowId } from '../../workflows/flows/flow-session.starter.js';
import { liveSessionOf } from './store.js';

/**
 * The chat ingress's reply hook (wired in api/http/ingress.ts): a customer's message goes to their
 * live session in the account the message came to, and to no other account's (the session is found
 * by account and customer together). A session that ended meanwhile is no one's to tell.
 */
export async function receiveFlowReply(deps: { orm: MikroORM; temporal: Client }, reply: CustomerReply): Promise<void> {
  const live = await liveSessionOf(deps.orm.em.fork(), reply.accountId, reply.customer);
  if (!live) return;
  try {
    await signalWorkflow(deps.temporal, flowSessionStarter, flowSessionWorkflowId(reply.accountId, live.uid), 'reply', {
      messageUid: reply.uid,
      body: reply.body,
    });
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
}
