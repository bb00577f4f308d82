import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import puppeteer from 'puppeteer-core';
import { API_URL, api, newTenant } from '../support/stack.js';
import { chromiumPath } from '../../scripts/browser.js';

// The reference pages: Scalar's standalone bundle, served by the API (from node_modules in a
// checkout; the image keeps the one file), drawing the customer document at /api-docs and the
// operator one at /admin/v1/api-docs, under a policy that lets in that bundle and one inline call
// only. The customer document opens with an introduction, and its request samples are sent as they are.

const scalarRoot = path.resolve(path.dirname(createRequire(import.meta.url).resolve('@scalar/api-reference')), '..');
const bundleFile = path.join(scalarRoot, 'dist', 'browser', 'standalone.js');
const version = (JSON.parse(fs.readFileSync(path.join(scalarRoot, 'package.json'), 'utf8')) as { version: string }).version;

async function page() {
  const res = await fetch(`${API_URL}/api-docs`);
  return { res, html: await res.text(), csp: res.headers.get('content-security-policy') ?? '' };
}

test('the page loads the bundle and the customer document from this origin, under a policy naming its one inline script', async () => {
  const { res, html, csp } = await page();
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
  const scripts = [...html.matchAll(/<script( src="([^"]*)")?>([\s\S]*?)<\/script>/g)];
  assert.deepEqual(
    scripts.map((m) => m[2] ?? 'inline'),
    [`/api-docs/scalar.js?v=${version}`, 'inline'],
    'the bundle (its version in the URL), then the call that starts it',
  );
  const init = scripts[1][3];
  assert.match(init, /^Scalar\.createApiReference\('#app', \{"url":"\/api-docs\/openapi\.json"/);
  assert.match(init, /"telemetry":false/);
  assert.doesNotMatch(html, /\/admin\/v1/, 'the operator API is not on the customer page');

  const directives = Object.fromEntries(csp.split(/;\s*/).map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
  assert.deepEqual(directives['default-src'], ["'none'"]);
  assert.deepEqual(directives['script-src'], ["'self'", `'sha256-${createHash('sha256').update(init).digest('base64')}'`]);
  assert.deepEqual(directives['connect-src'], ["'self'"]);
  assert.deepEqual(directives['frame-ancestors'], ["'none'"]);
  assert.doesNotMatch(csp, /unsafe-eval|\*|https?:/, 'no eval and no other origin');
});

test('the bundle is the package file, as JavaScript, cached for a year, gzipped when asked', async () => {
  const file = fs.readFileSync(bundleFile);
  const plain = await fetch(`${API_URL}/api-docs/scalar.js?v=${version}`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(plain.status, 200);
  assert.match(plain.headers.get('content-type') ?? '', /^text\/javascript/);
  assert.equal(plain.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.equal(plain.headers.get('content-encoding'), null);
  assert.ok(Buffer.from(await plain.arrayBuffer()).equals(file), 'the very file of node_modules');

  // fetch decodes gzip itself: the header says it was compressed, the body must still be the file.
  const zipped = await fetch(`${API_URL}/api-docs/scalar.js`, { headers: { 'accept-encoding': 'gzip' } });
  assert.equal(zipped.headers.get('content-encoding'), 'gzip');
  assert.match(zipped.headers.get('vary') ?? '', /Accept-Encoding/);
  assert.ok(Number(zipped.headers.get('content-length')) < file.length / 2, 'compressed');
  assert.ok(Buffer.from(await zipped.arrayBuffer()).equals(file));
});

test('in a real browser the page draws the operations of the customer document, and its policy refuses nothing', async () => {
  const executablePath = chromiumPath();
  assert.ok(executablePath, 'chromium is not installed (scripts/test.ts installs it when it runs this file)');
  const browser = await puppeteer.launch({
    executablePath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const tab = await browser.newPage();
    const problems: string[] = [];
    const elsewhere: string[] = [];
    tab.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    tab.on('pageerror', (err) => problems.push(String(err)));
    tab.on('request', (r) => {
      if (!r.url().startsWith(API_URL) && !r.url().startsWith('data:')) elsewhere.push(r.url());
    });
    await tab.setViewport({ width: 1280, height: 900 });
    // The SMS group opened by its link: operations are drawn when their group is (the HTML holds none).
    await tab.goto(`${API_URL}/api-docs#tag/sms`, { waitUntil: 'load' });
    const drawn = await tab
      .waitForFunction(() => document.body.innerText.includes('Send an SMS to one or many recipients'), { timeout: 60_000 })
      .then(
        () => true,
        () => false,
      );
    const text = await tab.evaluate(() => document.body.innerText);
    assert.deepEqual(problems, [], 'no script error and nothing refused by the policy');
    assert.deepEqual(elsewhere, [], 'nothing loaded from another origin');
    assert.ok(drawn, `the operations were not drawn; the page reads: ${text.slice(0, 400)}`);
    assert.match(text, /POST\s*\/api\/v3\/sms\/send/);
    // The introduction is drawn above the operations.
    for (const heading of ['Authentication', 'Rate limits', 'Webhooks']) assert.match(text, new RegExp(`\\n${heading}\\n`), heading);
    // The sidebar names the customer groups (drawn or not), and no operator one.
    for (const group of ['Chat-channel messages', 'Contacts', 'Automations']) assert.match(text, new RegExp(`\\n${group}\\n`), group);
    assert.doesNotMatch(text, /Settings \(operator\)|\/admin\/v1/, 'no operator route');
  } finally {
    await browser.close();
  }
});

test('the customer document opens with an introduction, and its samples are requests the API accepts', async () => {
  const doc = (await (await fetch(`${API_URL}/api-docs/openapi.json`)).json()) as {
    info: { description: string };
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { example?: unknown }> } }>>;
  };
  for (const heading of ['Authentication', 'Envelopes', 'Rate limits', 'Webhooks', 'MCP'])
    assert.match(doc.info.description, new RegExp(`^## ${heading}$`, 'm'), heading);
  assert.match(doc.info.description, /Authorization: Bearer/);
  assert.match(doc.info.description, /X-RateLimit-Remaining/);
  const bodies = Object.values(doc.paths).flatMap((ops) => Object.values(ops).filter((op) => op.requestBody));
  assert.ok(bodies.length > 30);
  for (const op of bodies) assert.ok('example' in op.requestBody!.content['application/json'], 'every body has its sample');

  // The SMS sample, sent exactly as the page shows it, with a real key.
  const sample = doc.paths['/api/v3/sms/send'].post.requestBody!.content['application/json'].example;
  const tenant = await newTenant();
  const sent = await api('POST', '/api/v3/sms/send', tenant.token, sample);
  assert.equal(sent.status, 201, sent.text);
  // A contact sample too, into a group made from the group sample.
  const groupSample = doc.paths['/api/v3/contact-groups'].post.requestBody!.content['application/json'].example;
  const group = await api('POST', '/api/v3/contact-groups', tenant.token, groupSample);
  assert.equal(group.status, 201, group.text);
  const contactSample = doc.paths['/api/v3/contact-groups/{group}/contacts'].post.requestBody!.content['application/json'].example;
  const contact = await api('POST', `/api/v3/contact-groups/${group.body.data.id}/contacts`, tenant.token, contactSample);
  assert.equal(contact.status, 201, contact.text);
});

test('the operator API has a page of its own, drawing the operator document with the same bundle', async () => {
  const res = await fetch(`${API_URL}/admin/v1/api-docs`);
  assert.equal(res.status, 200);
  const html = await res.text();
  assert.match(html, new RegExp(`<script src="/admin/v1/api-docs/scalar\\.js\\?v=${version.replace(/\./g, '\\.')}">`));
  assert.match(html, /"url":"\/admin\/v1\/openapi\.json"/);
  const init = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)][0][1];
  assert.match(
    res.headers.get('content-security-policy') ?? '',
    new RegExp(`'sha256-${createHash('sha256').update(init).digest('base64').replace(/[+/]/g, '\\$&')}'`),
  );
  const js = await fetch(`${API_URL}/admin/v1/api-docs/scalar.js?v=${version}`, { headers: { 'accept-encoding': 'identity' } });
  assert.equal(js.status, 200);
  assert.ok(Buffer.from(await js.arrayBuffer()).equals(fs.readFileSync(bundleFile)));
  const doc = (await (await fetch(`${API_URL}/admin/v1/openapi.json`)).json()) as {
    info: { description: string };
    paths: Record<string, unknown>;
  };
  assert.match(doc.info.description, /^## Authentication$/m);
  assert.ok(Object.keys(doc.paths).every((p) => p.startsWith('/admin/v1/')));
});
