import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, http, eventually, newTenant, type Tenant } from '../support/stack.js';
import { privateStack } from '../support/private-stack.js';

const newGroup = async (t: Tenant, base = '') =>
  (await http('POST', `${base}/api/v3/contact-groups`, { token: t.token, body: { name: 'Imported' } })).body.data;
const finished = (t: Tenant, group: number, id: number, base = '', timeoutMs = 30_000) =>
  eventually(
    () => http('GET', `${base}/api/v3/contact-groups/${group}/imports/${id}`, { token: t.token }),
    (r) => ['completed', 'failed'].includes(r.body?.data?.status),
    timeoutMs,
    500,
    `contact import ${id} completed or failed`,
  );
const allContacts = async (t: Tenant, group: number, base = '') => {
  const out = [];
  for (let page = 1; ; page++) {
    const r = await http('POST', `${base}/api/v3/contacts/${group}/all`, { token: t.token, body: { page, limit: 100 } });
    out.push(...r.body.data.contacts);
    if (!r.body.data.pagination.has_more_pages) return out;
  }
};

test('JSON import: 202 with an import id, rows judged like a create, matches by number update, per-row problems', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const existing = (
    await api('POST', `/api/v3/contacts/${g.id}/store`, t.token, {
      PHONE: '0712000001',
      country_code: '255',
      name: 'Old',
      is_subscribed: false,
      old: 1,
    })
  ).body.data;
  const r = await api('POST', `/api/v3/contact-groups/${g.uid}/imports`, t.token, {
    contacts: [
      { PHONE: '+255 712 000 001', country_code: '255', FIRST_NAME: 'Ann', city: 'Dar' },
      { phone_number: '0712000002', country_code: '255', name: 'Bob', is_subscribed: 'false' },
      { name: 'no phone' },
      'not an object',
      { PHONE: '0712000003', name: 'x'.repeat(161), is_subscribed: 'maybe' },
      { PHONE: '0712000002', country_code: '255', name: 'Bob again', custom_field_values: { tier: 'gold' } },
      { PHONE: 'unknown' },
    ],
  });
  assert.equal(r.status, 202, r.text);
  const imp = r.body.data;
  assert.equal(typeof imp.id, 'number');
  assert.ok(['queued', 'running', 'completed'].includes(imp.status));
  assert.deepEqual([imp.total, imp.group_id, imp.group_uid, imp.format], [7, g.id, g.uid, 'json']);

  const done = (await finished(t, g.id, imp.id)).body.data;
  assert.equal(done.status, 'completed', JSON.stringify(done));
  assert.deepEqual([done.processed, done.created, done.updated, done.failed], [7, 2, 2, 3]);
  assert.deepEqual(done.problems, [
    { row: 3, field: 'PHONE', message: 'The PHONE field is required.' },
    { row: 4, field: 'row', message: 'The contact must be an object.' },
    { row: 5, field: 'name', message: 'The name may not be greater than 160 characters.' },
    { row: 5, field: 'is_subscribed', message: 'The is subscribed field must be true or false.' },
  ]);
  assert.equal(done.problems_truncated, false);
  assert.ok(done.started_at && done.finished_at);

  const contacts = await allContacts(t, g.id);
  assert.equal(contacts.length, 3);
  const ann = contacts.find((c: any) => c.uid === existing.uid);
  assert.deepEqual(
    [ann.name, ann.is_subscribed, ann.custom_field_values],
    ['Ann', false, { city: 'Dar' }],
    'the existing contact was replaced, is_subscribed kept',
  );
  const bob = contacts.find((c: any) => c.phone_number === '712000002');
  assert.deepEqual(
    [bob.name, bob.is_subscribed, bob.custom_field_values],
    ['Bob again', false, { custom_field_values: { tier: 'gold' } }],
    'a later row replaces an earlier one',
  );
  assert.ok(
    contacts.some((c: any) => c.phone_number === '' && c.name === ''),
    'a phone without digits is kept empty',
  );
});

test('CSV import: header names the fields, quoting, custom columns, row and line numbers in problems', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const csv =
    '\ufeffPHONE,NAME,country_code,is_subscribed,city\r\n' +
    '0712 100 001,"Lee, Ann",255,0,"Dar ""es"" Salaam"\r\n' +
    '\r\n' +
    ',No phone,255,,Moshi\r\n' +
    '0712100002,Too,255,1,Arusha,unexpected\r\n' +
    '"0712100003","Multi\nline",255,yes,\r\n';
  const r = await api('POST', `/api/v3/contact-groups/${g.id}/imports`, t.token, { format: 'csv', csv });
  assert.equal(r.status, 202, r.text);
  const done = (await finished(t, g.id, r.body.data.id)).body.data;
  assert.deepEqual([done.status, done.format, done.total, done.created, done.updated, done.failed], ['completed', 'csv', 4, 2, 0, 2]);
  assert.deepEqual(done.problems, [
    { row: 2, line: 4, field: 'PHONE', message: 'The PHONE field is required.' },
    { row: 3, line: 5, field: 'row', message: 'The row has more cells than the header.' },
  ]);
  const contacts = await allContacts(t, g.id);
  const ann = contacts.find((c: any) => c.phone_number === '712100001');
  assert.deepEqual(
    [ann.name, ann.full_phone_number, ann.is_subscribed, ann.custom_field_values],
    ['Lee, Ann', '255712100001', false, { city: 'Dar "es" Salaam' }],
  );
  const multi = contacts.find((c: any) => c.phone_number === '712100003');
  assert.deepEqual([multi.name, multi.is_subscribed, multi.custom_field_values], ['Multi\nline', true, { city: '' }]);
});

test('import requests are validated before anything runs', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const post = (body: unknown, token = t.token) => api('POST', `/api/v3/contact-groups/${g.id}/imports`, token, body);
  const cases: Array<[unknown, string]> = [
    [{}, 'contacts'],
    [{ contacts: [] }, 'contacts'],
    [{ contacts: Array(10_001).fill({}) }, 'contacts'],
    [{ contacts: [{ PHONE: '1' }], csv: 'PHONE\n1' }, 'contacts'],
    [{ format: 'csv' }, 'csv'],
    [{ csv: 'name,city\nAnn,Dar' }, 'csv'],
    [{ csv: 'PHONE\n"unterminated' }, 'csv'],
    [{ csv: 'PHONE\n' }, 'csv'],
    [{ format: 'xml', csv: 'PHONE\n1' }, 'format'],
  ];
  for (const [body, field] of cases) {
    const r = await post(body);
    assert.equal(r.status, 422, JSON.stringify(body).slice(0, 80));
    assert.ok(r.body.errors[field], `${field}: ${JSON.stringify(r.body.errors)}`);
  }
  assert.equal((await post({ contacts: [{ PHONE: '1' }] }, t.legacyToken)).status, 403, 'a key without an issuer');
  assert.equal((await api('GET', `/api/v3/contact-groups/${g.id}/imports/999999999`, t.token)).status, 404);
});

test('problems are capped at 200 and flagged as truncated', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const r = await api('POST', `/api/v3/contact-groups/${g.id}/imports`, t.token, {
    contacts: [...Array(250).fill({ name: 'no phone' }), { PHONE: '0712999000' }],
  });
  const done = (await finished(t, g.id, r.body.data.id)).body.data;
  assert.deepEqual(
    [done.status, done.failed, done.created, done.problems.length, done.problems_truncated],
    ['completed', 250, 1, 200, true],
  );
  assert.deepEqual(done.problems.at(-1), { row: 200, field: 'PHONE', message: 'The PHONE field is required.' });
});

test('an import survives a worker killed in the middle: every row written exactly once', { timeout: 180_000 }, async () => {
  // Small batches make the kill land mid-import; polling fast needs more than 120 requests a minute.
  const stack = await privateStack({ CONTACT_IMPORT_BATCH_SIZE: '20', RATE_LIMIT_PER_MINUTE: '100000' });
  try {
    const t = await newTenant();
    const base = stack.apiUrl;
    const g = await newGroup(t, base);
    const rows = Array.from({ length: 2000 }, (_, i) => ({
      PHONE: `07${String(i).padStart(8, '0')}`,
      country_code: '255',
      name: `Row ${i}`,
      n: i,
    }));
    const r = await http('POST', `${base}/api/v3/contact-groups/${g.id}/imports`, { token: t.token, body: { contacts: rows } });
    assert.equal(r.status, 202, r.text);
    const id = r.body.data.id;
    const progress = () => http('GET', `${base}/api/v3/contact-groups/${g.id}/imports/${id}`, { token: t.token });
    const started = await eventually(progress, (x) => x.body.data.processed >= 100, 60_000, 50);
    assert.ok(started.body.data.processed >= 100);
    await stack.killWorker();
    const atKill = (await progress()).body.data;
    assert.ok(atKill.processed < 2000, `killed mid-import (processed ${atKill.processed})`);
    await new Promise((res) => setTimeout(res, 1500));
    assert.equal((await progress()).body.data.processed, atKill.processed, 'nothing moves without a worker');
    stack.startWorker();
    const done = (await finished(t, g.id, id, base, 120_000)).body.data;
    assert.deepEqual([done.status, done.processed, done.created, done.updated, done.failed], ['completed', 2000, 2000, 0, 0]);
    const contacts = await allContacts(t, g.id, base);
    assert.equal(contacts.length, 2000);
    assert.equal(new Set(contacts.map((c: any) => c.phone_number)).size, 2000, 'no row written twice');
    assert.deepEqual(
      contacts.map((c: any) => c.custom_field_values.n).sort((a: number, b: number) => a - b),
      rows.map((x) => x.n),
    );
  } finally {
    await stack.stop();
  }
});
