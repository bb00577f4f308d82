import { Client, Connection } from '@temporalio/client';

export interface TemporalClientHandle {
  client: Client;
  close(): Promise<void>;
}

export async function connectTemporalClient(address: string, namespace: string): Promise<TemporalClientHandle> {
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  return { client, close: () => connection.close() };
}
