import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import type { TemporalConnectionOptions } from '../config.js';

export interface TemporalClientHandle {
  client: Client;
  close(): Promise<void>;
}

/** Call deadlines of a client that serves requests (the API): `callTimeoutMs` for a call that waits for nothing, plus `waitMs` for one that waits on purpose. */
export interface CallDeadlines {
  callTimeoutMs: number;
  /** The longest wait a request asks Temporal for (an answered send's or a group change's 15 s). */
  waitMs: number;
}

/**
 * A client on the connection config.ts read through @temporalio/envconfig (TLS, mTLS, API key); a
 * bare address still works for the scripts and benches that talk to a local dev server. With
 * `deadlines`, no call of this client waits for ever on a Temporal that is down or hung.
 */
export async function connectTemporalClient(
  connection: TemporalConnectionOptions | string,
  namespace: string,
  deadlines?: CallDeadlines,
): Promise<TemporalClientHandle> {
  const options = typeof connection === 'string' ? { address: connection } : connection;
  const conn = await Connection.connect(deadlines ? { ...options, interceptors: [deadlineInterceptor(deadlines)] } : options);
  const client = new Client({ connection: conn, namespace });
  return { client, close: () => conn.close() };
}

type Interceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/**
 * The methods that wait on the server for something to happen: a workflow's result (history long
 * poll) and an update's outcome. Their deadline adds the wait a request may ask for.
 */
const WAITING_METHODS = new Set([
  'GetWorkflowExecutionHistory',
  'PollWorkflowExecutionUpdate',
  'UpdateWorkflowExecution',
  'ExecuteMultiOperation',
]);

/**
 * Every call without a deadline of its own (Connection.withDeadline sets one) gets the default,
 * and the SDK's retries of an unavailable server (its default interceptor, replaced here) stop
 * where the next attempt would start past that deadline: left alone they back off up to 5 s at a
 * time for ten attempts, about 17 s against a Temporal that is down.
 */
export function deadlineInterceptor(d: CallDeadlines): Interceptor {
  const retry = defaultGrpcRetryOptions();
  return (options, nextCall) => {
    const method = options.method_definition.path.split('/').pop() ?? '';
    const given = options.deadline === undefined || options.deadline === Infinity ? undefined : new Date(options.deadline).getTime();
    const deadline = given ?? Date.now() + d.callTimeoutMs + (WAITING_METHODS.has(method) ? d.waitMs : 0);
    let delay = 0;
    const bounded = makeGrpcRetryInterceptor({
      retryableDecider: (attempt, status) => {
        delay = retry.delayFunction(attempt, status);
        return retry.retryableDecider(attempt, status) && Date.now() + delay < deadline;
      },
      delayFunction: () => delay,
    });
    return bounded({ ...options, deadline }, nextCall);
  };
}
