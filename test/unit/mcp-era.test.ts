import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLegacyRequest, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { plainlyLegacy } from '../../api/mcp/server.js';

// The MCP door decides the common 2025-era request's era itself (plainlyLegacy) and leaves every
// other request to the SDK's isLegacyRequest: where it decides, it must agree with the SDK.

const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_contact', arguments: { group: 1 } } };
const cases: { name: string; body: unknown; header?: string; decided: boolean }[] = [
  { name: 'tools/call without _meta', body: call, decided: true },
  { name: 'tools/list without params', body: { jsonrpc: '2.0', id: 'a', method: 'tools/list' }, decided: true },
  {
    name: 'initialize',
    body: {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    },
    decided: true,
  },
  { name: 'a 2025 header', body: call, header: '2025-11-25', decided: true },
  { name: 'a 2025 header with spaces', body: call, header: ' 2025-06-18 ', decided: true },
  { name: '_meta with a progress token only', body: { ...call, params: { ...call.params, _meta: { progressToken: 3 } } }, decided: true },
  { name: 'a modern header without a claim', body: call, header: '2026-07-28', decided: false },
  { name: 'a later modern header', body: call, header: '2027-01-01', decided: false },
  {
    name: 'an envelope claim',
    body: { ...call, params: { ...call.params, _meta: { [PROTOCOL_VERSION_META_KEY]: '2026-07-28' } } },
    decided: false,
  },
  { name: 'a notification', body: { jsonrpc: '2.0', method: 'notifications/initialized' }, decided: false },
  { name: 'a batch', body: [call], decided: false },
  { name: 'a response', body: { jsonrpc: '2.0', id: 1, result: {} }, decided: false },
  { name: 'params not an object', body: { ...call, params: [1] }, decided: false },
  { name: '_meta not an object', body: { ...call, params: { _meta: 'x' } }, decided: false },
  { name: 'another JSON-RPC version', body: { ...call, jsonrpc: '1.0' }, decided: false },
  { name: 'no body', body: undefined, decided: false },
];

for (const c of cases) {
  test(`era of ${c.name}: ${c.decided ? 'legacy, as the SDK says' : 'left to the SDK'}`, async () => {
    const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    if (c.header !== undefined) headers.set('mcp-protocol-version', c.header);
    const request = new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(c.body ?? null) });
    assert.equal(plainlyLegacy(headers, c.body), c.decided);
    if (c.decided) assert.equal(await isLegacyRequest(request, c.body), true);
  });
}
