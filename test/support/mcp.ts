import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { API_URL } from './stack.js';

/** Runs fn with the SDK's MCP client connected to one MCP server of the stack (/mcp/v1/<server>), then closes it. */
export async function withMcpServer<T>(server: string, token: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: `${server}-test`, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${API_URL}/mcp/v1/${server}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}
