import { proxyActivities, uuid4, ActivityFailure } from '@temporalio/workflow';
import type { OperationActivities } from '../../activities/automations/operation-run.js';

export interface OperationRunInput {
  accountId: number;
  /** Given by the API (the run row exists, queued); a scheduled start leaves it out and gets a new one. */
  runId?: string;
  operationName: string;
  input: Record<string, unknown>;
  source: string;
}

const act = proxyActivities<OperationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 },
});

/** One run of an operator-defined operation: record it, do it, record the outcome. */
export async function operationRunWorkflow(input: OperationRunInput): Promise<{ runId: string; status: 'succeeded' | 'failed' }> {
  const runId = input.runId ?? uuid4();
  const begun = await act.beginOperationRun({
    runId,
    accountId: input.accountId,
    operationName: input.operationName,
    input: input.input,
    source: input.source,
  });
  if (!begun.ok) {
    await act.finishOperationRun({ runId, status: 'failed', error: begun.error });
    return { runId, status: 'failed' };
  }
  try {
    const result = await act.executeOperation({
      runId,
      accountId: input.accountId,
      kind: begun.kind,
      config: begun.config,
      input: input.input,
    });
    await act.finishOperationRun({ runId, status: 'succeeded', result });
    return { runId, status: 'succeeded' };
  } catch (err) {
    const error = err instanceof ActivityFailure && err.cause ? err.cause.message : String(err);
    await act.finishOperationRun({ runId, status: 'failed', error });
    return { runId, status: 'failed' };
  }
}
