import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/client';
import { admin, api, newTenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';
import { customerOperations } from '../../api/operations.js';
import { buildManifest, toolOf } from '../../api/mcp/tools.js';

// Chat groups from a model client: the groups server serves exactly the thirteen group operations,
// with the REST schemas, the group scope and the elevation each effect needs.

const GROUP_OPS = [
  'create_chat_group',
  'list_chat_groups',
  'get_chat_group',
  'update_chat_group',
  'delete_chat_group',
  'invite_to_chat_group',
  'reset_chat_group_invite_link',
  'list_chat_group_join_requests',
  'approve_chat_group_join_requests',
  'reject_chat_group_join_requests',
  'remove_chat_group_participants',
  'send_chat_group_message',
  'pin_chat_group_message',
];

const mcp = <T>(token: string, fn: (c: Client) => Promise<T>) => withMcpServer('groups', token, fn);

test('MCP /mcp/v1/groups: the thirteen group operations are its tools, with the REST schemas; a read answers as REST does', async () => {
  const groupOps = customerOperations.filter((op) => op.path.startsWith('/api/v3/whatsapp/groups'));
  assert.deepEqual(groupOps.map((op) => op.name).sort(), [...GROUP_OPS].sort(), 'thirteen operations under /whatsapp/groups');
  const t = await newTenant();
  const cred = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(cred.status, 201, cred.text);
  await mcp(cred.body.data.token, async (c) => {
    const tools = (await c.listTools()).tools;
    assert.deepEqual(tools.map((x) => x.name).sort(), [...GROUP_OPS].sort(), 'the groups server serves exactly the group operations');
    for (const op of groupOps) {
      const tool = tools.find((x) => x.name === op.name)!;
      assert.deepEqual(tool.inputSchema, toolOf(op).inputSchema, `${op.name}: input schema (the portable projection)`);
      assert.deepEqual(tool.outputSchema, toolOf(op).outputSchema, `${op.name}: output schema (its shape)`);
      assert.equal(op.mcp?.scope, 'mcp:groups', op.name);
      assert.equal(op.issuerRequired, true, op.name);
      if (op.method === 'GET') assert.equal(tool.annotations?.readOnlyHint, true, op.name);
      else assert.ok(op.mcp?.elevation, `${op.name} needs an elevation scope`);
    }
    // One presentation rule (docs/architecture.md): a group message send answers the group message itself, a reset the group.
    type Out = { required: string[]; properties: Record<string, unknown> };
    const outputOf = (name: string) => buildManifest([]).tools.find((x) => x.name === name)!.outputSchema as unknown as Out;
    const send = outputOf('send_chat_group_message');
    assert.ok(send.required.includes('uid') && send.required.includes('group_id') && !('messages' in send.properties));
    const reset = outputOf('reset_chat_group_invite_link');
    assert.ok(reset.required.includes('id') && reset.required.includes('invite_link') && !('group' in reset.properties));
    const listed = (await c.callTool({ name: 'list_chat_groups', arguments: {} })) as { isError?: boolean; structuredContent?: unknown };
    assert.notEqual(listed.isError, true, JSON.stringify(listed));
    const rest = await api('GET', '/api/v3/whatsapp/groups', t.token);
    assert.equal(rest.status, 200, rest.text);
    assert.deepEqual(listed.structuredContent, rest.body.data);
    const missing = (await c.callTool({ name: 'get_chat_group', arguments: { id: '999999999' } })) as { isError?: boolean };
    assert.equal(missing.isError, true, 'an unknown group is a tool error');
  });
});
