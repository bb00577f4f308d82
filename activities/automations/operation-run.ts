import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { RequestContext } from '../../services/platform/context.js';
import { estimateSegments } from '../../domain/messaging/index.js';
import { parseRecipient } from '../../services/platform/phones.js';
import { createOutboundMessages, messageOfOperationRun, resolveSmsRoute } from '../../services/messaging/index.js';
import { accountForContext } from '../../services/account/index.js';
import { emitBusinessEvent } from '../../services/automations/index.js';
import { activeOperation, beginRun, businessEventIdBySource, finishRun } from '../../services/automations/store.js';
import { renderTemplate } from '../../services/automations/operations.js';

export interface OperationDeps {
  orm: MikroORM;
  config: Config;
  log: Logger;
}

interface Begin {
  runId: string;
  accountId: number;
  operationName: string;
  input: Record<string, unknown>;
  source: string;
}
export type BeginResult = { ok: true; kind: string; config: Record<string, unknown> } | { ok: false; error: string };

export function createOperationActivities(deps: OperationDeps) {
  /** The operation as the account's own send: same sender rules, records and message workflow. */
  const sendSms = async (a: { runId: string; accountId: number; config: Record<string, unknown>; input: Record<string, unknown> }) => {
    const em = deps.orm.em.fork();
    // At least once: a retried activity finds the message it already created.
    const existing = await messageOfOperationRun(em, a.accountId, a.runId);
    if (existing) return { message_id: Number(existing.id), uid: existing.uid, status: existing.status };
    const account = await accountForContext(em, a.accountId);
    if (!account) throw ApplicationFailure.nonRetryable('account not found', 'OperationInvalid');
    const rc: RequestContext = { account, actor: { kind: 'system', process: `operation-run:${a.runId}` }, em, log: deps.log };
    const route = await resolveSmsRoute(rc, a.config.sender_id as string | undefined);
    const text = renderTemplate(String(a.config.message), a.input.vars as Record<string, unknown>);
    const to = parseRecipient(String(a.input.to));
    const seg = estimateSegments(text);
    const [m] = await createOutboundMessages(
      rc,
      { temporal: Context.current().client, config: { ...deps.config, firstOutcomeWaitMs: 0 } },
      [
        {
          channelType: 'sms',
          channelId: route.channelId,
          channelCode: route.channelCode,
          sender: route.sender,
          recipient: 'e164' in to ? to.e164 : String(a.input.to),
          body: text,
          metadata: { source: 'operation', operation_run: a.runId },
          segments: seg.segments,
          encoding: seg.encoding,
          scheduledAt: null,
          failure: 'e164' in to ? null : to.problem,
        },
      ],
    );
    return { message_id: m.id, uid: m.uid, status: m.status };
  };

  return {
    /** Records the run as running (creating it for scheduled runs) and reads the definition. */
    async beginOperationRun(b: Begin): Promise<BeginResult> {
      const em = deps.orm.em.fork();
      const def = await activeOperation(em, b.accountId, b.operationName);
      await beginRun(em, {
        id: b.runId,
        account_id: b.accountId,
        operation_id: def?.id ?? 0,
        operation_name: b.operationName,
        input: b.input,
        source: b.source,
      });
      return def
        ? { ok: true, kind: def.kind, config: def.config }
        : { ok: false, error: `operation ${b.operationName} is not defined or inactive` };
    },

    async executeOperation(a: {
      runId: string;
      accountId: number;
      kind: string;
      config: Record<string, unknown>;
      input: Record<string, unknown>;
    }): Promise<Record<string, unknown>> {
      // A DomainError (unknown sender, invalid number) becomes a non-retryable failure in activities/failures.ts.
      if (a.kind === 'send_sms') return await sendSms(a);
      if (a.kind === 'emit_business_event') {
        return await deps.orm.em.fork().transactional(async (tx) => {
          const source = `operation:${a.runId}`;
          const id =
            (await businessEventIdBySource(tx, a.accountId, source)) ??
            (await emitBusinessEvent(tx, a.accountId, String(a.config.type), (a.input.data as Record<string, unknown>) ?? {}, source));
          return { business_event_id: id };
        });
      }
      throw ApplicationFailure.nonRetryable(`unknown operation kind ${a.kind}`, 'OperationInvalid');
    },

    async finishOperationRun(f: {
      runId: string;
      status: 'succeeded' | 'failed';
      result?: Record<string, unknown>;
      error?: string;
    }): Promise<void> {
      await finishRun(deps.orm.em.fork(), { id: f.runId, status: f.status, result: f.result ?? null, error: f.error ?? null });
    },
  };
}

export type OperationActivities = ReturnType<typeof createOperationActivities>;
