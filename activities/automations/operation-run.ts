import { ApplicationFailure, Context } from '@temporalio/activity';
import type { MikroORM } from '@mikro-orm/postgresql';
import { exec, one } from '../../entities/db.js';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import type { RequestContext, AccountRow } from '../../services/platform/context.js';
import { estimateSegments } from '../../domain/messaging/index.js';
import { parseRecipient } from '../../services/platform/phones.js';
import { createOutboundMessages, resolveSmsRoute } from '../../services/messaging/index.js';
import { emitBusinessEvent } from '../../services/automations/index.js';
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
    const existing = await one<{ id: string; uid: string; status: string }>(
      em,
      `select id, uid, status from messages where account_id = ? and metadata->>'operation_run' = ?`,
      [a.accountId, a.runId],
    );
    if (existing) return { message_id: Number(existing.id), uid: existing.uid, status: existing.status };
    const account = await one<AccountRow>(em, 'select * from accounts where id = ?', [a.accountId]);
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
      const def = await one<{ id: number; kind: string; config: Record<string, unknown> }>(
        em,
        'select id, kind, config from operation_definitions where account_id = ? and name = ? and active',
        [b.accountId, b.operationName],
      );
      await exec(
        em,
        `insert into operation_runs (id, account_id, operation_id, operation_name, input, status, source, created_at) values (?, ?, ?, ?, ?, 'running', ?, now())
         on conflict (id) do update set status = 'running' where operation_runs.status = 'queued'`,
        [b.runId, b.accountId, def?.id ?? 0, b.operationName, JSON.stringify(b.input), b.source],
      );
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
          const done = await one<{ id: string }>(tx, 'select id from business_events where account_id = ? and source = ?', [
            a.accountId,
            source,
          ]);
          const id =
            done?.id ??
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
      await exec(deps.orm.em.fork(), 'update operation_runs set status = ?, result = ?, error = ?, finished_at = now() where id = ?', [
        f.status,
        f.result ? JSON.stringify(f.result) : null,
        f.error ?? null,
        f.runId,
      ]);
    },
  };
}

export type OperationActivities = ReturnType<typeof createOperationActivities>;
