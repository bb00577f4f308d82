import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { API_URL } from './stack.js';

/** Runs fn with the SDK's MCP client connected to one MCP server of the stack (/mcp/v1/<server>; null: /mcp), then closes it. */
export async function withMcpServer<T>(server: string | null, token: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: `${server ?? 'all'}-test`, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${API_URL}${server === null ? '/mcp' : `/mcp/v1/${server}`}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

/** The names tools/list answers one MCP server of the stack for this token. */
export const toolNames = (server: string | null, token: string) =>
  withMcpServer(server, token, async (c) => (await c.listTools()).tools.map((t) => t.name));
