import { Client, Connection } from '@temporalio/client';
import type { TemporalConnectionOptions } from '../config.js';

export interface TemporalClientHandle {
  client: Client;
  close(): Promise<void>;
}

/**
 * A client on the connection config.ts read through @temporalio/envconfig (TLS, mTLS, API key); a
 * bare address still works for the scripts and benches that talk to a local dev server.
 */
export async function connectTemporalClient(
  connection: TemporalConnectionOptions | string,
  namespace: string,
): Promise<TemporalClientHandle> {
  const options = typeof connection === 'string' ? { address: connection } : connection;
  const conn = await Connection.connect(options);
  const client = new Client({ connection: conn, namespace });
  return { client, close: () => conn.close() };
}
