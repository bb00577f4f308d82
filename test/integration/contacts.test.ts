import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, newTenant, type Tenant } from '../support/stack.js';

const newGroup = async (t: Tenant, name = 'Customers') => {
  const r = await api('POST', '/api/v3/contact-groups', t.token, { name });
  assert.equal(r.status, 201, r.text);
  return r.body.data as { id: number; uid: string; name: string };
};
const store = (t: Tenant, group: string | number, body: Record<string, unknown>, token = t.legacyToken) =>
  api('POST', `/api/v3/contacts/${group}/store`, token, body);

test('compatibility store: phone normalization, name derivation, custom fields, is_subscribed default; legacy keys work', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const r = await store(t, g.id, {
    PHONE: '+255 0712-345 678',
    country_code: '255',
    FIRST_NAME: 'Ann',
    LAST_NAME: 'Lee',
    city: 'Dar',
    custom_field_values: { plan: 'gold' },
    _token: 'csrf',
    tenant_id: 99,
  });
  assert.equal(r.status, 201, r.text);
  const c = r.body.data;
  assert.match(c.uid, /^ctc_/);
  assert.equal(typeof c.id, 'number');
  assert.deepEqual(
    {
      group_id: c.group_id,
      group_uid: c.group_uid,
      name: c.name,
      country_code: c.country_code,
      phone_number: c.phone_number,
      full_phone_number: c.full_phone_number,
      is_subscribed: c.is_subscribed,
    },
    {
      group_id: g.id,
      group_uid: g.uid,
      name: 'Ann Lee',
      country_code: '255',
      phone_number: '712345678',
      full_phone_number: '255712345678',
      is_subscribed: true,
    },
  );
  assert.deepEqual(c.custom_field_values, { city: 'Dar', custom_field_values: { plan: 'gold' }, tenant_id: 99 });
  assert.ok(c.created_at && c.updated_at);

  const plus = (await store(t, g.uid, { PHONE: '+255712345678' })).body.data;
  assert.deepEqual(
    [plus.country_code, plus.phone_number, plus.full_phone_number, plus.name],
    ['', '255712345678', '255712345678', '255712345678'],
    'no inference from a leading plus; name falls back to the phone',
  );
  const trunk = (
    await store(t, g.id, { phone_number: '0712 000 111', PHONE: '0713 000 222', country_code: '+255', NAME: 'Upper', is_subscribed: false })
  ).body.data;
  assert.deepEqual(
    [trunk.phone_number, trunk.full_phone_number, trunk.name, trunk.is_subscribed, trunk.custom_field_values],
    ['713000222', '255713000222', 'Upper', false, {}],
    'PHONE wins',
  );
  const noCode = (await store(t, g.id, { phone_number: '0712 000 111', name: 'Lower', NAME: 'Upper' })).body.data;
  assert.deepEqual(
    [noCode.phone_number, noCode.name],
    ['0712000111', 'Lower'],
    'trunk zero kept without a country code; name wins over NAME',
  );
});

test('compatibility store limits answer 422 keyed by field', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const cases: Array<[Record<string, unknown>, string]> = [
    [{}, 'PHONE'],
    [{ PHONE: '' }, 'PHONE'],
    [{ PHONE: '1'.repeat(65) }, 'PHONE'],
    [{ phone_number: '1'.repeat(65) }, 'phone_number'],
    [{ PHONE: '1', country_code: '123456789' }, 'country_code'],
    [{ PHONE: '1', name: 'n'.repeat(161) }, 'name'],
    [{ PHONE: '1', NAME: 'n'.repeat(161) }, 'NAME'],
    [{ PHONE: '1', is_subscribed: 'perhaps' }, 'is_subscribed'],
    [{ PHONE: { nested: true } }, 'PHONE'],
  ];
  for (const [body, field] of cases) {
    const r = await store(t, g.id, body);
    assert.equal(r.status, 422, JSON.stringify(body).slice(0, 60));
    assert.equal(r.body.status, 'error');
    assert.ok(r.body.errors[field], `${field}: ${JSON.stringify(r.body.errors)}`);
  }
  const edge = await store(t, g.id, { PHONE: '1'.repeat(64), country_code: '12345678', name: 'n'.repeat(160) });
  assert.equal(edge.status, 201, 'values at the limits are accepted');
});

test('search, update and delete by uid or numeric id, within the requested group and account only', async () => {
  const t = await newTenant();
  const [g, other] = [await newGroup(t, 'A'), await newGroup(t, 'B')];
  const c = (await store(t, g.id, { PHONE: '0712111222', country_code: '255', name: 'Ann', city: 'Dar', vip: true, is_subscribed: false }))
    .body.data;
  for (const [group, ref] of [
    [g.id, c.uid],
    [g.uid, c.id],
    [g.uid, c.uid],
  ]) {
    const r = await api('POST', `/api/v3/contacts/${group}/search/${ref}`, t.legacyToken);
    assert.equal(r.status, 200, `${group}/${ref}`);
    assert.equal(r.body.data.uid, c.uid);
  }
  assert.equal((await api('GET', `/api/v3/contacts/${g.id}/search/${c.uid}`, t.legacyToken)).status, 405, 'GET is not the read path');
  assert.equal(
    (await api('POST', `/api/v3/contacts/${other.id}/search/${c.uid}`, t.legacyToken)).status,
    404,
    'another group of the same account',
  );
  assert.equal((await api('POST', `/api/v3/contacts/${g.id}/search/ctc_missing`, t.legacyToken)).status, 404);
  assert.equal((await api('POST', `/api/v3/contacts/999999999/search/${c.uid}`, t.legacyToken)).status, 404);
  assert.equal((await api('POST', `/api/v3/contacts/not-a-group/search/${c.uid}`, t.legacyToken)).status, 404);

  const noPhone = await api('PATCH', `/api/v3/contacts/${g.id}/update/${c.uid}`, t.legacyToken, { name: 'Ann B' });
  assert.equal(noPhone.status, 422);
  assert.ok(noPhone.body.errors.PHONE, 'update requires the phone again');
  const u = await api('PATCH', `/api/v3/contacts/${g.uid}/update/${c.id}`, t.legacyToken, {
    phone_number: '0799000111',
    LAST_NAME: 'Lee',
    tier: 'gold',
  });
  assert.equal(u.status, 200, u.text);
  assert.deepEqual(
    [u.body.data.name, u.body.data.country_code, u.body.data.phone_number, u.body.data.is_subscribed],
    ['Lee', '', '0799000111', false],
    'name recomputed, code cleared, is_subscribed kept',
  );
  assert.deepEqual(u.body.data.custom_field_values, { tier: 'gold' }, 'the custom-field map is replaced whole');
  assert.ok(u.body.data.updated_at >= c.updated_at);
  const resub = await api('PATCH', `/api/v3/contacts/${g.id}/update/${c.uid}`, t.legacyToken, { PHONE: '0799000111', is_subscribed: true });
  assert.deepEqual([resub.body.data.is_subscribed, resub.body.data.name, resub.body.data.custom_field_values], [true, '0799000111', {}]);
  assert.equal((await api('PATCH', `/api/v3/contacts/${other.id}/update/${c.uid}`, t.legacyToken, { PHONE: '1' })).status, 404);

  assert.equal((await api('DELETE', `/api/v3/contacts/${other.id}/delete/${c.uid}`, t.legacyToken)).status, 404);
  const d = await api('DELETE', `/api/v3/contacts/${g.id}/delete/${c.uid}`, t.legacyToken);
  assert.equal(d.status, 200);
  assert.deepEqual(d.body.data, { id: c.id, uid: c.uid, deleted: true });
  assert.equal((await api('DELETE', `/api/v3/contacts/${g.id}/delete/${c.uid}`, t.legacyToken)).status, 404, 'a second delete is 404');
});

test('all: search over name and national number, page and limit, newest updated first, pagination object', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const made = [];
  for (let i = 0; i < 23; i++)
    made.push(
      (
        await store(t, g.id, {
          PHONE: `+255 7100${String(i).padStart(5, '0')}`,
          country_code: '255',
          name: i === 7 ? 'Zawadi Mushi' : `Person ${i}`,
        })
      ).body.data,
    );
  const all = (body: Record<string, unknown>) => api('POST', `/api/v3/contacts/${g.uid}/all`, t.legacyToken, body);
  const first = await all({});
  assert.equal(first.status, 200);
  assert.deepEqual(first.body.data.pagination, { current_page: 1, per_page: 20, last_page: 2, total: 23, has_more_pages: true });
  assert.deepEqual(
    first.body.data.contacts.map((c: any) => c.uid),
    made
      .slice()
      .reverse()
      .slice(0, 20)
      .map((c) => c.uid),
    'newest updated first',
  );
  const second = await all({ page: 2 });
  assert.deepEqual([second.body.data.contacts.length, second.body.data.pagination.has_more_pages], [3, false]);
  assert.equal((await all({ limit: 500 })).body.data.pagination.per_page, 100, 'limit is capped at 100');
  assert.equal(
    (await all({ limit: 5, per_page: 10, page: '2' })).body.data.contacts.length,
    5,
    'limit wins over per_page; numeric strings accepted',
  );

  await api('PATCH', `/api/v3/contacts/${g.id}/update/${made[3].uid}`, t.legacyToken, { PHONE: made[3].phone_number, name: 'Moved up' });
  assert.equal((await all({ limit: 1 })).body.data.contacts[0].uid, made[3].uid, 'an update moves the contact first');
  assert.deepEqual(
    (await all({ search: 'zawadi' })).body.data.contacts.map((c: any) => c.uid),
    [made[7].uid],
    'name, case-insensitive',
  );
  const byPhone = await all({ search: 710000012 });
  assert.deepEqual(
    byPhone.body.data.contacts.map((c: any) => c.uid),
    [made[12].uid],
    'national number',
  );
  assert.equal(
    (await all({ search: '255710000012' })).body.data.pagination.total,
    0,
    'the country code is not part of the national number',
  );
  assert.equal((await all({ search: 'Pers_n%' })).body.data.pagination.total, 0, 'wildcards are literal');
});

test('REST-style contact routes act on the same records with issuer permissions', async () => {
  const t = await newTenant();
  const g = await newGroup(t);
  const base = `/api/v3/contact-groups/${g.uid}/contacts`;
  const created = await api('POST', base, t.token, { PHONE: '0712 555 666', country_code: '255', name: 'Rest' });
  assert.equal(created.status, 201, created.text);
  const c = created.body.data;
  assert.equal(
    (await api('POST', `/api/v3/contacts/${g.id}/search/${c.uid}`, t.legacyToken)).body.data.name,
    'Rest',
    'visible on the compatibility path',
  );
  assert.equal((await api('GET', `${base}/${c.id}`, t.token)).body.data.uid, c.uid);
  const list = await api('GET', `/api/v3/contact-groups/${g.id}/contacts?search=rest&limit=5`, t.token);
  assert.deepEqual([list.status, list.body.data.contacts.length, list.body.data.pagination.per_page], [200, 1, 5]);
  const upd = await api('PATCH', `${base}/${c.uid}`, t.token, { PHONE: '0712555666', country_code: '255', FIRST_NAME: 'New' });
  assert.deepEqual([upd.status, upd.body.data.name], [200, 'New']);
  const group = await api('GET', `/api/v3/contact-groups/${g.id}`, t.token);
  assert.equal(group.body.data.contacts_count, 1);

  for (const [method, path, body] of [
    ['GET', base],
    ['POST', base, { PHONE: '1' }],
    ['GET', `${base}/${c.uid}`],
    ['PATCH', `${base}/${c.uid}`, { PHONE: '1' }],
    ['DELETE', `${base}/${c.uid}`],
    ['GET', '/api/v3/contact-groups'],
  ] as const) {
    const r = await api(method, path, t.legacyToken, body);
    assert.equal(r.status, 403, `${method} ${path}`);
    assert.equal(r.body.reason, 'issuer_required');
  }
  const del = await api('DELETE', `${base}/${c.uid}`, t.token);
  assert.equal(del.status, 200);
  assert.equal((await api('GET', `${base}/${c.uid}`, t.token)).status, 404);
});

test('a key whose issuer lacks a permission is refused that action only', async () => {
  const t = await newTenant({ permissions: ['contacts.view', 'contacts.create', 'contacts.edit'] });
  const g = await newGroup(t);
  const c = (await api('POST', `/api/v3/contact-groups/${g.id}/contacts`, t.token, { PHONE: '1234567' })).body.data;
  const refused = await api('DELETE', `/api/v3/contact-groups/${g.id}/contacts/${c.uid}`, t.token);
  assert.equal(refused.status, 403);
  assert.equal(refused.body.reason, 'permission_denied');
  assert.match(refused.body.message, /contacts\.delete/);
  assert.equal((await api('DELETE', `/api/v3/contact-groups/${g.id}`, t.token)).status, 403);
  assert.equal(
    (await api('POST', `/api/v3/contact-groups/${g.id}/imports`, t.token, { contacts: [{ PHONE: '1' }] })).status,
    403,
    'no contacts.import',
  );
  assert.equal((await api('GET', `/api/v3/contact-groups/${g.id}/contacts/${c.uid}`, t.token)).status, 200);
  assert.equal(
    (await api('DELETE', `/api/v3/contacts/${g.id}/delete/${c.uid}`, t.token)).status,
    200,
    'the compatibility path checks only the account',
  );

  const viewer = await newTenant({ permissions: ['contacts.view'] });
  assert.equal((await api('POST', '/api/v3/contact-groups', viewer.token, { name: 'x' })).status, 403);
  assert.equal((await api('GET', '/api/v3/contact-groups', viewer.token)).status, 200);
});

test("tenant isolation: another account's group or contact is 404 on every path", async () => {
  const [a, b] = [await newTenant(), await newTenant()];
  const ga = await newGroup(a);
  const gb = await newGroup(b);
  const ca = (await store(a, ga.id, { PHONE: '0712000999' })).body.data;
  const paths: Array<[string, string, unknown?]> = [
    ['POST', `/api/v3/contacts/${ga.id}/store`, { PHONE: '1' }],
    ['POST', `/api/v3/contacts/${ga.uid}/search/${ca.uid}`],
    ['PATCH', `/api/v3/contacts/${ga.id}/update/${ca.id}`, { PHONE: '1' }],
    ['DELETE', `/api/v3/contacts/${ga.id}/delete/${ca.uid}`],
    ['POST', `/api/v3/contacts/${ga.id}/all`, {}],
    ['POST', `/api/v3/contacts/${gb.id}/search/${ca.uid}`],
    ['POST', `/api/v3/contacts/${gb.id}/search/${ca.id}`],
    ['GET', `/api/v3/contact-groups/${ga.uid}`],
    ['PATCH', `/api/v3/contact-groups/${ga.id}`, { name: 'mine' }],
    ['DELETE', `/api/v3/contact-groups/${ga.id}`],
    ['GET', `/api/v3/contact-groups/${ga.id}/contacts`],
    ['GET', `/api/v3/contact-groups/${gb.id}/contacts/${ca.uid}`],
    ['POST', `/api/v3/contact-groups/${ga.id}/imports`, { contacts: [{ PHONE: '1' }] }],
  ];
  for (const [method, path, body] of paths) {
    const r = await api(method, path, b.token, body);
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.equal(r.body.status, 'error');
  }
  assert.equal((await api('POST', `/api/v3/contacts/${ga.id}/search/${ca.uid}`, a.token)).status, 200, 'still there for its owner');
  assert.equal((await api('GET', `/api/v3/contact-groups/${ga.id}`, a.token)).body.data.contacts_count, 1);
});
