import { test } from 'node:test';
import assert from 'node:assert/strict';
import { http } from '../support/stack.js';
import { allRoutes } from '../../api/operations.js';
import type { AppDeps } from '../../api/http/app.js';
import { loadConfig } from '../../config.js';

const routes = allRoutes({ config: loadConfig() } as AppDeps);

test('every route declares its request and response schemas', () => {
  const missing = routes.filter(
    (r) =>
      !r.response?.schema || (['POST', 'PUT', 'PATCH'].includes(r.method) && !r.body && !r.rawBody) || (r.method === 'GET' && !r.query),
  );
  assert.deepEqual(
    missing.map((r) => `${r.method} ${r.path}`),
    [],
  );
});

test('GET /api-docs/openapi.json is OpenAPI 3.1.0, version 3.6.0, built from the validation schemas', async () => {
  const r = await http('GET', '/api-docs/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.body.openapi, '3.1.0');
  assert.equal(r.body.info.version, '3.6.0');
  const send = r.body.paths['/api/v3/sms/send'].post;
  const schema = send.requestBody.content['application/json'].schema;
  assert.equal(schema.properties.recipient.maxLength, 4000);
  const def = routes.find((x) => x.path === '/api/v3/sms/send')!;
  assert.deepEqual(schema, JSON.parse(JSON.stringify(def.body)));
  for (const route of routes.filter((x) => x.tag !== 'Documentation' && x.auth !== 'operator'))
    assert.ok(r.body.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path} documented`);
  assert.deepEqual(
    Object.keys(r.body.paths).filter((p) => p.startsWith('/admin/')),
    [],
    'the customer document does not describe the operator API',
  );
  assert.deepEqual(Object.keys(r.body.components.securitySchemes), ['bearer']);
});

test('the document states the presentation rule: a single resource is data itself, query booleans read true/false/1/0', async () => {
  const doc = (await http('GET', '/api-docs/openapi.json')).body;
  const data = (p: string, method: string, status: string) =>
    doc.paths[p][method].responses[status].content['application/json'].schema.properties.data;
  const order = data('/api/v3/catalogues/orders/{order}', 'get', '200');
  assert.ok(order.required.includes('id') && order.required.includes('product_items'), JSON.stringify(order.required));
  assert.ok(data('/api/v3/catalogues/orders/{order}/status', 'put', '200').required.includes('status'));
  const groupMessage = data('/api/v3/whatsapp/groups/{id}/messages', 'post', '201');
  assert.ok(groupMessage.required.includes('uid') && groupMessage.required.includes('group_id'), JSON.stringify(groupMessage.required));
  assert.ok(data('/api/v3/whatsapp/groups/{id}/invite-link/reset', 'post', '200').required.includes('invite_link'));

  const param = (p: string, name: string) => doc.paths[p].get.parameters.find((x: { name: string }) => x.name === name).schema;
  for (const [p, name] of [
    ['/api/v3/data/tables/{table}/records', 'with_count'],
    ['/api/v3/catalogues/{catalogue}/inventory', 'tracked_only'],
  ])
    assert.deepEqual(param(p, name).enum, [true, false, 'true', 'false', '1', '0'], `${p} ${name}`);
  const operatorDoc = (await http('GET', '/admin/v1/openapi.json')).body;
  for (const d of [doc, operatorDoc])
    for (const [p, methods] of Object.entries(d.paths as Record<string, Record<string, { parameters?: any[] }>>))
      for (const [m, op] of Object.entries(methods))
        for (const q of (op.parameters ?? []).filter((x) => x.in === 'query'))
          assert.notEqual(q.schema?.type, 'boolean', `${m} ${p} ${q.name} is a bare boolean`);
});

test('GET /admin/v1/openapi.json describes every operator operation and nothing else', async () => {
  const r = await http('GET', '/admin/v1/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.body.openapi, '3.1.0');
  const operator = routes.filter((x) => x.auth === 'operator');
  assert.ok(operator.length > 20);
  for (const route of operator) {
    const op = r.body.paths[route.path]?.[route.method.toLowerCase()];
    assert.ok(op, `${route.method} ${route.path} documented`);
    assert.deepEqual(op.security, [{ operator: [] }]);
  }
  assert.deepEqual(
    Object.keys(r.body.paths).filter((p) => !p.startsWith('/admin/v1/')),
    [],
  );
  assert.deepEqual(Object.keys(r.body.components.securitySchemes), ['operator']);
});

test('GET /api-docs is a reference page drawn from the customer document (test/integration/api-docs-page.test.ts draws it)', async () => {
  const res = await fetch(`${process.env.API_URL}/api-docs`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/html/);
  const html = await res.text();
  assert.match(html, /"url":"\/api-docs\/openapi\.json"/);
  assert.doesNotMatch(html, /\/admin\/v1/, 'the operator API is not on the customer reference page');
});

test('refusals are documented in the envelope each door answers: data endpoints in the data one, shop pages as HTML', async () => {
  const doc = (await http('GET', '/api-docs/openapi.json')).body;
  const records = doc.paths['/api/v3/data/tables/{table}/records'].get.responses;
  assert.ok(records['422'].content['application/json'].schema.properties.error, 'a data refusal carries error{code,…}');
  const sms = doc.paths['/api/v3/sms/send'].post.responses;
  assert.ok(sms['422'].content['application/json'].schema.properties.status, 'a v3 refusal carries status');
  const page = doc.paths['/shop/{catalogue}/p/{sku}'].get.responses;
  assert.ok(page['200'].content['text/html'], 'the page is HTML');
  assert.ok(page['404'].content['text/html'], 'its own 404 is an HTML page');
});
