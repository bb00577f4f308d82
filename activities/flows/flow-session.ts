import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../../services/platform/context.js';
import { DomainError, describeDomainError } from '../../services/platform/errors.js';
import { accountForContext } from '../../services/account/index.js';
import { messageOfSourceKey, sendWhatsApp } from '../../services/messaging/index.js';
import { checkTemplateSend } from '../../services/templates/index.js';
import { upsertLead, type UpsertBody } from '../../services/leads/index.js';
import { closeSession, openSession, recordStep, type OpenResult, type OpenSessionInput } from '../../services/flows/index.js';
import type { EndReason } from '../../domain/flows/index.js';

export type { OpenResult } from '../../services/flows/index.js';

export interface FlowActivityDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

/** What a message step did: the message's uid, or why nothing was sent (the step leaves by `failed`). */
export type SendResult = { ok: true; message_uid: string; status: string } | { ok: false; error: string };

// The flow session's I/O (workflows/flows/flow-session.ts). Each is idempotent: the session's row
// and its end are written once (state checks), a step once (its key), a message once (its
// source_key, looked up on a retried attempt), a lead stage is a set, not a move.
export function createFlowActivities(deps: FlowActivityDeps) {
  const actAs = async (accountId: number, sessionUid: string): Promise<RequestContext> => {
    const em = deps.orm.em.fork();
    const account = await accountForContext(em, accountId);
    if (!account) throw ApplicationFailure.nonRetryable('account not found', 'FlowSessionInvalid');
    return { account, actor: { kind: 'system', process: `flow-session:${sessionUid}` }, em, log: deps.log };
  };
  /** A refusal the business can fix (no chat number, a template not approved, the leads module off) is the step's failure, not a retry. */
  const refusal = (err: unknown): string | null => (err instanceof DomainError ? describeDomainError(err) : null);

  return {
    async openFlowSession(a: OpenSessionInput): Promise<OpenResult> {
      return openSession(deps.orm.em.fork(), a);
    },

    async sendFlowMessage(a: {
      accountId: number;
      sessionUid: string;
      seq: number;
      customer: string;
      senderId: string | null;
      body: string | null;
      template: { name: string; language: string; components?: unknown[] } | null;
    }): Promise<SendResult> {
      const rc = await actAs(a.accountId, a.sessionUid);
      const key = `flow:${a.sessionUid}:${a.seq}`;
      // A retried attempt finds the message the first one created instead of sending it again.
      if (Context.current().info.attempt > 1) {
        const sent = await messageOfSourceKey(rc.em, a.accountId, key);
        if (sent) return { ok: true, message_uid: sent.uid, status: sent.status };
      }
      try {
        const [m] = await sendWhatsApp(
          rc,
          { temporal: Context.current().client, config: { ...deps.config, firstOutcomeWaitMs: 0 } },
          {
            recipient: a.customer,
            ...(a.senderId ? { sender_id: a.senderId } : {}),
            ...(a.template
              ? {
                  message_type: 'template',
                  template: { name: a.template.name, language: a.template.language, components: a.template.components ?? [] },
                }
              : { message_type: 'text', message: a.body ?? '' }),
          },
          { checkTemplate: checkTemplateSend, metadata: { source: 'flow', source_key: key, flow_session: a.sessionUid } },
        );
        return m.status === 'failed'
          ? { ok: false, error: String((m as { error_message?: unknown }).error_message ?? 'the message failed') }
          : { ok: true, message_uid: m.uid, status: m.status };
      } catch (err) {
        const why = refusal(err);
        if (why === null) throw err;
        return { ok: false, error: why };
      }
    },

    async setFlowLeadStage(a: {
      accountId: number;
      sessionUid: string;
      customer: string;
      stage: string;
      reason: string | null;
    }): Promise<{ ok: true; lead_id: number; stage: string } | { ok: false; error: string }> {
      const rc = await actAs(a.accountId, a.sessionUid);
      try {
        const body = { phone: a.customer, stage: a.stage, source: 'flow', ...(a.reason ? { reason: a.reason } : {}) } as UpsertBody;
        const r = await upsertLead(rc, body);
        return { ok: true, lead_id: r.id, stage: r.stage };
      } catch (err) {
        const why = refusal(err);
        if (why === null) throw err;
        return { ok: false, error: why };
      }
    },

    async recordFlowStep(s: {
      accountId: number;
      sessionUid: string;
      seq: number;
      state: string;
      type: string;
      event: string | null;
      next: string | null;
      detail: Record<string, unknown>;
    }): Promise<void> {
      await recordStep(deps.orm.em.fork(), s);
    },

    async closeFlowSession(a: {
      accountId: number;
      sessionUid: string;
      reason: EndReason;
      error: string | null;
      state: string;
    }): Promise<void> {
      await closeSession(deps.orm.em.fork(), a);
    },
  };
}

export type FlowActivities = ReturnType<typeof createFlowActivities>;
