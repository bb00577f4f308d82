import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allRoutes } from '../../api/operations.js';
import type { AppDeps } from '../../api/http/app.js';
import { exampleOf } from '../../api/http/examples.js';
import { validateBody } from '../../services/platform/validation.js';
import { loadConfig } from '../../config.js';

// The reference pages' request samples are sent as they are: each JSON body's example (the one the
// OpenAPI documents carry) is accepted by the very validation the door runs.

const routes = allRoutes({ config: loadConfig() } as AppDeps);

test("every JSON body's sample, customer and operator, passes the operation's own validation", () => {
  const bodies = routes.filter((r) => r.body && !r.rawBody);
  assert.ok(bodies.length >= 60, `${bodies.length} bodies`);
  const refused: string[] = [];
  for (const r of bodies) {
    const sample = exampleOf(r.body);
    try {
      validateBody(r.body!, structuredClone(sample));
    } catch (err) {
      refused.push(
        `${r.method} ${r.path} ${JSON.stringify(sample)}: ${JSON.stringify((err as { detail?: unknown }).detail ?? String(err))}`,
      );
    }
  }
  assert.deepEqual(refused, []);
});

test('samples read like requests: phone numbers in E.164, the SMS send with its text', () => {
  const send = routes.find((r) => r.method === 'POST' && r.path === '/api/v3/sms/send')!;
  assert.deepEqual(exampleOf(send.body), { recipient: '+255712345678', message: 'Your order is ready for pickup.' });
  const contact = routes.find((r) => r.method === 'POST' && r.path === '/api/v3/contact-groups/{group}/contacts')!;
  assert.deepEqual(exampleOf(contact.body), { PHONE: '+255712345678' });
});
