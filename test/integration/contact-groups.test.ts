import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, newTenant } from '../support/stack.js';

test('groups: create, read by id and UUID, rename, list newest first with the pagination object, delete', async () => {
  const t = await newTenant();
  const made = [];
  for (let i = 0; i < 23; i++) {
    const r = await api('POST', '/api/v3/contact-groups', t.token, { name: `  Group ${i}  ` });
    assert.equal(r.status, 201, r.text);
    made.push(r.body.data);
  }
  const g = made[0];
  assert.equal(typeof g.id, 'number');
  assert.match(g.uid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.deepEqual([g.name, g.contacts_count], ['Group 0', 0]);
  assert.ok(g.created_at && g.updated_at);

  const byId = await api('GET', `/api/v3/contact-groups/${g.id}`, t.token);
  const byUid = await api('GET', `/api/v3/contact-groups/${g.uid.toUpperCase()}`, t.token);
  assert.equal(byId.status, 200);
  assert.deepEqual(byUid.body.data, byId.body.data, 'the UUID addresses the same group, in any case');

  const list = await api('GET', '/api/v3/contact-groups', t.token);
  assert.equal(list.status, 200);
  assert.deepEqual(list.body.data.pagination, { current_page: 1, per_page: 20, last_page: 2, total: 23, has_more_pages: true });
  assert.deepEqual(
    list.body.data.groups.map((x: any) => x.id),
    made
      .slice()
      .reverse()
      .slice(0, 20)
      .map((x) => x.id),
    'newest first',
  );
  const page2 = await api('GET', '/api/v3/contact-groups?page=2&per_page=20', t.token);
  assert.deepEqual([page2.body.data.groups.length, page2.body.data.pagination.has_more_pages], [3, false]);
  const limited = await api('GET', '/api/v3/contact-groups?per_page=2&limit=5', t.token);
  assert.equal(limited.body.data.groups.length, 5, 'limit wins over per_page');
  assert.equal((await api('GET', '/api/v3/contact-groups?limit=1000', t.token)).body.data.pagination.per_page, 100, 'cap 100');
  assert.equal((await api('GET', '/api/v3/contact-groups?search=group%2012', t.token)).body.data.pagination.total, 1);
  assert.equal((await api('GET', '/api/v3/contact-groups?page=0', t.token)).status, 422);

  const renamed = await api('PATCH', `/api/v3/contact-groups/${g.uid}`, t.token, { name: 'VIP' });
  assert.deepEqual([renamed.status, renamed.body.data.name, renamed.body.data.uid], [200, 'VIP', g.uid]);

  await api('POST', `/api/v3/contacts/${g.id}/store`, t.token, { PHONE: '0712000001' });
  await api('POST', `/api/v3/contacts/${g.uid}/store`, t.token, { PHONE: '0712000002' });
  assert.equal((await api('GET', `/api/v3/contact-groups/${g.id}`, t.token)).body.data.contacts_count, 2);

  const del = await api('DELETE', `/api/v3/contact-groups/${g.uid}`, t.token);
  assert.deepEqual([del.status, del.body.data], [200, { id: g.id, uid: g.uid, deleted: true }]);
  assert.equal((await api('GET', `/api/v3/contact-groups/${g.id}`, t.token)).status, 404);
  assert.equal((await api('POST', `/api/v3/contacts/${g.id}/all`, t.token, {})).status, 404, 'its contacts went with it');
});

test('group names: required, at most 160 characters', async () => {
  const t = await newTenant();
  for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'n'.repeat(161) }, { name: 5 }]) {
    const r = await api('POST', '/api/v3/contact-groups', t.token, body);
    assert.equal(r.status, 422, JSON.stringify(body));
    assert.ok(r.body.errors.name, JSON.stringify(r.body));
  }
  assert.equal((await api('POST', '/api/v3/contact-groups', t.token, { name: 'n'.repeat(160) })).status, 201);
  assert.equal((await api('GET', '/api/v3/contact-groups/12abc', t.token)).status, 404);
  assert.equal((await api('GET', '/api/v3/contact-groups/99999999999', t.token)).status, 404);
});
