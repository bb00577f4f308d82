import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, api, newTenant, uniquePhone, type Tenant } from '../support/stack.js';
import { withMcpServer } from '../support/mcp.js';
import { leadOperations } from '../../api/leads/leads.js';

// Leads end to end (issue 28, points 1, 5; docs/leads.md): the upsert finding one person by a phone
// number in any form, an e-mail without case, a chat id, a conversation or a call; the family's
// paths with their refusal reasons; the lead.* events exactly; the issuer's permissions and what a
// key without leads.data.all sees; the module switched off; bad input refused whole; another
// account's ids not found on every path; 100 concurrent upserts of one person making one lead.

const L = '/api/v3/leads';

/** A Tanzanian number unique to this run, in E.164 and in its other common forms. */
function person() {
  // A Tanzanian mobile number is 7 and eight digits: the run-unique digits of uniquePhone make the eight.
  const e164 = `+2557${uniquePhone('').slice(-8)}`;
  const n = e164.slice(4); // the 9-digit national number after +255
  const spaced = `${n.slice(0, 3)} ${n.slice(3, 6)} ${n.slice(6)}`;
  return {
    e164,
    forms: [
      e164,
      `+255 ${spaced}`,
      `+255-${n.slice(0, 3)}-${n.slice(3, 6)}-${n.slice(6)}`,
      `+255 (0)${spaced}`,
      `255${n}`,
      `00255${n}`,
      `0${spaced}`,
      `0${n.slice(0, 3)}-${n.slice(3, 6)}-${n.slice(6)}`,
      n,
      `tel:+255-${n}`,
    ],
  };
}

async function tzTenant(opts: { permissions?: string[] } = {}) {
  const t = await newTenant(opts);
  const r = await admin('PATCH', `/accounts/${t.accountId}`, { country: 'tz' });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.data.country, 'TZ', 'stored upper case');
  return t;
}

/** Another user of the account with these permissions, and a key they issued. */
async function member(t: Tenant, permissions: string[]) {
  const u = await admin('POST', `/accounts/${t.accountId}/users`, {
    email: `m${Date.now()}${Math.random().toString(36).slice(2, 7)}@example.com`,
    name: 'Member',
    permissions,
  });
  assert.equal(u.status, 201, u.text);
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'member', user_id: u.body.data.id });
  assert.equal(k.status, 201, k.text);
  return { userId: u.body.data.id as number, token: k.body.data.token as string };
}

async function freshKey(t: Tenant) {
  const k = await admin('POST', `/accounts/${t.accountId}/keys`, { name: 'more', user_id: t.userId });
  assert.equal(k.status, 201, k.text);
  return k.body.data.token as string;
}

const upsert = async (token: string, body: unknown, status = 200) => {
  const r = await api('POST', L, token, body);
  assert.equal(r.status, status, r.text);
  return r.body;
};

/** The lead events recorded for the account, oldest first, as [kind, lead_id]. */
async function leadEvents(t: Tenant) {
  const r = await admin('GET', `/accounts/${t.accountId}/events?limit=100`);
  assert.equal(r.status, 200, r.text);
  return (r.body.data as any[]).filter((e) => e.event.startsWith('lead.')).reverse();
}

/** A body each lead path accepts, so a call reaches the service (its refusal is then the service's). */
const VALID: Record<string, unknown> = {
  upsert_lead: { phone: '+255754000001' },
  update_lead: { name: 'changed' },
  update_lead_settings: { ai_access: 'write' },
  change_lead_stage: { stage: 'contacted' },
  assign_lead: { assignee_id: null },
  add_lead_labels: { labels: ['x'] },
  add_lead_note: { body: 'x' },
  merge_leads: { lead_id: 1 },
};
const bodyOf = (op: { name: string; method: string }) => (op.method === 'GET' || op.method === 'DELETE' ? undefined : VALID[op.name]);

test('the upsert finds one person by phone in any form, e-mail without case, chat id, conversation and call', async () => {
  const t = await tzTenant();
  const p = person();
  const first = (await upsert(t.token, { phone: p.forms[6], name: 'Asha', email: 'Asha.M@Example.COM', source: 'web_form' })).data;
  assert.equal(first.created, true);
  assert.equal(first.matched_by, null);
  assert.equal(first.phone, p.e164, 'stored in E.164');
  assert.equal(first.email, 'asha.m@example.com', 'stored lower case');
  assert.equal(first.stage, 'new');
  assert.equal(first.added_by, t.userId);
  for (const form of p.forms) {
    const again = (await upsert(t.token, { phone: form })).data;
    assert.equal(again.id, first.id, form);
    assert.equal(again.created, false, form);
    assert.equal(again.matched_by, 'phone', form);
  }
  const byMail = (await upsert(t.token, { email: '  ASHA.m@example.com ', company: 'Duka Ltd' })).data;
  assert.deepEqual([byMail.id, byMail.matched_by, byMail.company, byMail.name], [first.id, 'email', 'Duka Ltd', 'Asha']);

  // A chat id and a call are added to the person found by phone, then find it alone.
  await upsert(t.token, { phone: p.forms[1], chat_id: `+${p.e164.slice(1)}`, call_id: 'CA-1' });
  assert.equal((await upsert(t.token, { chat_id: p.e164.slice(1) })).data.id, first.id);
  assert.equal((await upsert(t.token, { call_id: 'CA-1' })).data.matched_by, 'call');

  // A conversation's customer is the person; the conversation is attached and finds the lead again.
  const conversation = `whatsapp:55501:${p.forms[4]}`;
  const viaChat = (await upsert(t.token, { conversation_id: conversation })).data;
  assert.deepEqual([viaChat.id, viaChat.conversation_id], [first.id, conversation]);
  // Its customer's phone is the stronger identity of the two it names.
  assert.equal((await upsert(t.token, { conversation_id: conversation })).data.matched_by, 'phone');
  const kinds = viaChat.identities.map((i: { kind: string }) => i.kind).sort();
  assert.deepEqual(kinds, ['call', 'chat_id', 'conversation', 'email', 'phone']);

  // A new person by a conversation alone: its customer's phone is the lead's.
  const q = person();
  const fresh = (await upsert(t.token, { conversation_id: `whatsapp:55501:${q.e164}` })).data;
  assert.deepEqual([fresh.created, fresh.phone], [true, q.e164]);

  // Nothing to identify the person.
  for (const body of [{}, { name: 'Nobody' }, { name: 'x', company: 'y', stage: 'new' }]) {
    const r = await api('POST', L, t.token, body);
    assert.equal(r.status, 422, r.text);
    assert.equal(r.body.reason, 'nothing_to_identify');
  }

  // Identities naming two leads: the e-mail's wins, the other is reported to merge.
  const dup = (await upsert(t.token, { email: 'asha.m@example.com', phone: q.forms[7] })).data;
  assert.deepEqual([dup.id, dup.matched_by, dup.duplicate_ids], [first.id, 'email', [fresh.id]]);
  const merged = await api('POST', `${L}/${first.id}/merge`, t.token, { lead_id: fresh.id });
  assert.equal(merged.status, 200, merged.text);
  assert.deepEqual(merged.body.data.merged_ids, [fresh.id]);
  assert.equal((await api('GET', `${L}/${fresh.id}`, t.token)).status, 404, 'the merged lead is gone');
  assert.equal((await upsert(t.token, { phone: q.forms[0] })).data.id, first.id, 'its identities find the lead merged into');
});

test('a national number is read in the request’s country, else the account’s; without either it is refused', async () => {
  const t = await newTenant();
  const p = person();
  const r = await api('POST', L, t.token, { phone: p.forms[6] });
  assert.equal(r.status, 422, r.text);
  assert.equal(r.body.reason, 'invalid');
  assert.match(r.body.errors.phone[0], /national number/);
  const made = (await upsert(t.token, { phone: p.forms[6], country: 'TZ' })).data;
  assert.equal(made.phone, p.e164);
  assert.equal((await upsert(t.token, { phone: p.forms[4] })).data.id, made.id, 'the country code without a plus needs no country');
  const wrong = await admin('PATCH', `/accounts/${t.accountId}`, { country: 'XX' });
  assert.equal(wrong.status, 422, wrong.text);
});

test('stages, labels, notes, assignment, list filters, delete, and the lead events exactly', async () => {
  const t = await tzTenant();
  const other = await member(t, ['leads.view']);
  const p = person();
  const id = (await upsert(t.token, { phone: p.e164, name: 'Baraka', labels: ['VIP'], note: 'Met at the fair' })).data.id;

  // Stages.
  const bad = await api('POST', `${L}/${id}/stage`, t.token, { stage: 'closed' });
  assert.deepEqual([bad.status, bad.body.reason, Object.keys(bad.body.errors)], [422, 'invalid', ['stage']], bad.text);
  const noReason = await api('POST', `${L}/${id}/stage`, t.token, { stage: 'lost' });
  assert.deepEqual([noReason.status, noReason.body.reason], [422, 'reason_required']);
  assert.equal((await api('POST', `${L}/${id}/stage`, t.token, { stage: 'qualified' })).body.data.stage, 'qualified');
  const won = (await api('POST', `${L}/${id}/stage`, t.token, { stage: 'won' })).body.data;
  assert.ok(won.closed_at);
  const locked = await api('POST', `${L}/${id}/stage`, t.token, { stage: 'contacted' });
  assert.deepEqual([locked.status, locked.body.reason], [409, 'won_locked']);
  const viaUpsert = await api('POST', L, t.token, { phone: p.forms[3], stage: 'opportunity' });
  assert.deepEqual([viaUpsert.status, viaUpsert.body.reason], [409, 'won_locked'], 'the upsert keeps the same rules');
  const reopened = (await api('POST', `${L}/${id}/stage`, t.token, { stage: 'opportunity', reason: 'order cancelled' })).body.data;
  assert.deepEqual([reopened.stage, reopened.stage_reason, reopened.closed_at], ['opportunity', 'order cancelled', null]);

  // Labels: kept once whatever the case; removed without case.
  const labelled = (await api('POST', `${L}/${id}/labels`, t.token, { labels: ['vip', 'Hot  lead', 'Fair'] })).body.data;
  assert.deepEqual(labelled.labels, ['VIP', 'Hot lead', 'Fair']);
  const unlabelled = await api('DELETE', `${L}/${id}/labels/${encodeURIComponent('hot lead')}`, t.token);
  assert.equal(unlabelled.status, 200, unlabelled.text);
  assert.deepEqual(unlabelled.body.data.labels, ['VIP', 'Fair']);
  assert.equal((await api('DELETE', `${L}/${id}/labels/nope`, t.token)).status, 404);

  // Notes and the timeline.
  const note = await api('POST', `${L}/${id}/notes`, t.token, { body: 'Called back, wants a quote' });
  assert.equal(note.status, 201, note.text);
  assert.equal(note.body.data.kind, 'note');
  const notes = (await api('GET', `${L}/${id}/activities?kind=note`, t.token)).body.data;
  assert.deepEqual(
    notes.activities.map((a: { body: string }) => a.body),
    ['Called back, wants a quote', 'Met at the fair'],
  );
  const timeline = (await api('GET', `${L}/${id}/activities?per_page=50`, t.token)).body.data;
  assert.ok(timeline.activities.some((a: any) => a.kind === 'stage_changed' && a.data.to_stage === 'won'));

  // Assignment.
  const unknown = await api('POST', `${L}/${id}/assign`, t.token, { assignee_id: 99_999_999 });
  assert.deepEqual([unknown.status, unknown.body.reason], [422, 'assignee_unknown']);
  assert.equal((await api('POST', `${L}/${id}/assign`, t.token, { assignee_id: other.userId })).body.data.assignee_id, other.userId);

  // List filters and page-number pagination.
  const second = (await upsert(t.token, { email: `lead-${Date.now()}@example.com`, name: 'Zawadi Kiwanda', company: 'Kiwanda' })).data.id;
  const list = async (query: string) => (await api('GET', `${L}?${query}`, t.token)).body.data;
  assert.deepEqual(
    (await list('stage=opportunity')).leads.map((l: any) => l.id),
    [id],
  );
  assert.deepEqual(
    (await list('label=vip')).leads.map((l: any) => l.id),
    [id],
  );
  assert.deepEqual(
    (await list(`assignee=${other.userId}`)).leads.map((l: any) => l.id),
    [id],
  );
  assert.deepEqual(
    (await list('assignee=none')).leads.map((l: any) => l.id),
    [second],
  );
  assert.deepEqual(
    (await list('q=kiwanda')).leads.map((l: any) => l.id),
    [second],
  );
  const paged = await list('per_page=1&page=2');
  assert.deepEqual(paged.pagination, { current_page: 2, per_page: 1, last_page: 2, total: 2, has_more_pages: false });
  assert.equal(paged.leads[0].id, id, 'most recently changed first');
  assert.equal((await api('GET', `${L}?stage=closed`, t.token)).status, 422);

  // Delete.
  const gone = await api('DELETE', `${L}/${second}`, t.token);
  assert.deepEqual(gone.body.data, { id: second, deleted: true });
  assert.equal((await api('GET', `${L}/${second}`, t.token)).status, 404);

  const events = await leadEvents(t);
  assert.deepEqual(
    events.filter((e) => e.lead_id === id).map((e) => e.event),
    [
      'lead.created',
      'lead.note_added',
      'lead.stage_changed',
      'lead.stage_changed',
      'lead.stage_changed',
      'lead.label_added',
      'lead.label_added',
      'lead.label_removed',
      'lead.note_added',
      'lead.assigned',
    ],
  );
  const moved = events.find((e) => e.event === 'lead.stage_changed' && e.to_stage === 'opportunity');
  assert.deepEqual([moved.from_stage, moved.reason, moved.stage], ['won', 'order cancelled', 'opportunity']);
  assert.ok(events.every((e) => typeof e.event_id === 'string' && e.account_id === t.accountId));
  assert.deepEqual(
    events.filter((e) => e.lead_id === second).map((e) => e.event),
    ['lead.created', 'lead.deleted'],
  );
});

test('permissions on the issuer, what a key without leads.data.all sees, the module switch, AI access', async () => {
  const t = await tzTenant();
  const viewer = await member(t, ['leads.view']);
  const seller = await member(t, ['leads.view', 'leads.edit']);
  const p = person();
  const q = person();
  const r = person();
  const pooled = (await upsert(t.token, { phone: p.e164, name: 'pool' })).data.id;
  const theirs = (await upsert(t.token, { phone: q.e164, name: 'assigned elsewhere', assignee_id: viewer.userId })).data.id;
  const added = (await upsert(seller.token, { phone: r.e164, name: 'added by seller' })).data.id;
  // Assigned to someone else, it stays visible to the seller who added it.
  assert.equal((await api('POST', `${L}/${added}/assign`, t.token, { assignee_id: viewer.userId })).status, 200);

  // Legacy key (no issuer) and a missing permission.
  const legacy = await api('GET', L, t.legacyToken);
  assert.deepEqual([legacy.status, legacy.body.reason], [403, 'issuer_required']);
  const denied = await api('POST', L, viewer.token, { phone: person().e164 });
  assert.deepEqual([denied.status, denied.body.reason], [403, 'permission_denied']);
  assert.equal((await api('POST', `${L}/${pooled}/assign`, seller.token, { assignee_id: null })).status, 403);
  assert.equal((await api('DELETE', `${L}/${pooled}`, seller.token)).status, 403);
  const assignInUpsert = await api('POST', L, seller.token, { phone: p.e164, assignee_id: seller.userId });
  assert.deepEqual([assignInUpsert.status, assignInUpsert.body.reason], [403, 'permission_denied']);

  // The seller sees the pool and what they added, not a lead assigned to someone else.
  const seen = (await api('GET', L, seller.token)).body.data.leads.map((l: any) => l.id).sort();
  assert.deepEqual(seen, [pooled, added].sort());
  assert.equal((await api('GET', `${L}/${theirs}`, seller.token)).status, 404);
  assert.equal((await api('POST', `${L}/${theirs}/notes`, seller.token, { body: 'x' })).status, 404);
  const hidden = await api('POST', L, seller.token, { phone: q.forms[5], name: 'taken over?' });
  assert.equal(hidden.status, 409, hidden.text);
  assert.ok(!hidden.text.includes(String(viewer.userId)), 'the owner is not named');
  assert.equal((await api('GET', `${L}/${theirs}`, t.token)).body.data.name, 'assigned elsewhere', 'unchanged');
  // The viewer sees their own and the pool.
  const viewerSees = (await api('GET', L, viewer.token)).body.data.leads.map((l: any) => l.id).sort();
  assert.deepEqual(viewerSees, [pooled, theirs, added].sort());

  // AI assistants: the account decides (leads.settings).
  const mcp = await admin('POST', `/accounts/${t.accountId}/mcp-credentials`, { name: 'assistant', user_id: t.userId });
  assert.equal(mcp.status, 201, mcp.text);
  const set = await api('PATCH', `${L}/settings`, t.token, { ai_access: 'read' });
  assert.deepEqual(set.body.data, { enabled: true, ai_access: 'read', updated_at: set.body.data.updated_at });
  assert.equal((await api('PATCH', `${L}/settings`, seller.token, { ai_access: 'write' })).status, 403, 'needs leads.settings');
  await withMcpServer('leads', mcp.body.data.token, async (c) => {
    const listed = (await c.callTool({ name: 'list_leads', arguments: {} })) as any;
    assert.notEqual(listed.isError, true, JSON.stringify(listed));
    assert.equal(listed.structuredContent.leads.length, 3);
    const write = (await c.callTool({ name: 'upsert_lead', arguments: { phone: person().e164 } })) as any;
    assert.equal(write.isError, true);
    assert.equal(JSON.parse(write.content[0].text).reason, 'ai_not_allowed');
  });
  await api('PATCH', `${L}/settings`, t.token, { ai_access: 'none' });
  await withMcpServer('leads', mcp.body.data.token, async (c) => {
    const listed = (await c.callTool({ name: 'get_lead', arguments: { lead: String(pooled) } })) as any;
    assert.equal(JSON.parse(listed.content[0].text).reason, 'ai_not_allowed');
  });
  await api('PATCH', `${L}/settings`, t.token, { ai_access: 'write' });
  await withMcpServer('leads', mcp.body.data.token, async (c) => {
    const made = (await c.callTool({ name: 'upsert_lead', arguments: { phone: p.forms[8], labels: ['from-ai'] } })) as any;
    assert.notEqual(made.isError, true, JSON.stringify(made));
    assert.deepEqual([made.structuredContent.id, made.structuredContent.labels], [pooled, ['from-ai']]);
    // A tool's arguments the schema refuses carry the same reason as on REST.
    const refused = (await c.callTool({ name: 'change_lead_stage', arguments: { lead: String(pooled), stage: 'closed' } })) as any;
    assert.equal(refused.isError, true);
    assert.equal(JSON.parse(refused.content[0].text).reason, 'invalid');
  });

  // The operator switches the module off: every lead path answers 403.
  const off = await admin('PATCH', `/accounts/${t.accountId}/leads/settings`, { enabled: false });
  assert.equal(off.status, 200, off.text);
  const key = await freshKey(t);
  for (const op of leadOperations) {
    const path = op.path.replace('{lead}', String(pooled)).replace('{label}', 'vip');
    const res = await api(op.method, path, key, bodyOf(op));
    assert.equal(res.status, 403, `${op.name}: ${res.text}`);
    assert.equal(res.body.reason, 'module_disabled', op.name);
  }
  await admin('PATCH', `/accounts/${t.accountId}/leads/settings`, { enabled: true });
  assert.equal((await api('GET', `${L}/${pooled}`, key)).status, 200);
});

test('bad input is a clear 4xx and writes nothing; another account’s lead ids are not found on every path', async () => {
  const t = await tzTenant();
  const b = await tzTenant();
  const p = person();
  const id = (await upsert(t.token, { phone: p.e164, name: 'A’s lead', labels: ['vip'] })).data.id;
  const before = (await api('GET', `${L}/${id}`, t.token)).body.data;
  const eventsBefore = (await leadEvents(t)).length;

  const refusals: [string, string, unknown, number, string?][] = [
    ['POST', L, { phone: 'abc' }, 422, 'invalid'],
    ['POST', L, { phone: '12345' }, 422, 'invalid'],
    ['POST', L, { phone: '+255 12' }, 422, 'invalid'],
    ['POST', L, { phone: '0754123456x' }, 422, 'invalid'],
    ['POST', L, { phone: 'x'.repeat(65) }, 422, 'invalid'],
    ['POST', L, { email: 'not-an-address' }, 422, 'invalid'],
    ['POST', L, { email: 'a@b' }, 422, 'invalid'],
    ['POST', L, { phone: p.e164, email: 'broken@' }, 422, 'invalid'],
    ['POST', L, { phone: p.e164, stage: 'closed' }, 422, 'invalid'],
    ['POST', L, { phone: p.e164, stage: 'lost' }, 422, 'reason_required'],
    ['POST', L, { phone: p.e164, note: 'n'.repeat(10_001) }, 422, 'invalid'],
    ['POST', L, { phone: p.e164, assignee_id: 99_999_999 }, 422, 'assignee_unknown'],
    ['POST', L, { phone: p.e164, labels: ['ok', ''] }, 422, 'invalid'],
    ['POST', L, { phone: p.e164, unknown_field: true }, 422, 'invalid'],
    ['POST', L, { conversation_id: 'nonsense' }, 422, 'invalid'],
    ['PATCH', `${L}/${id}`, { email: 'nope' }, 422, 'invalid'],
    ['PATCH', `${L}/${id}`, { phone: '0000' }, 422, 'invalid'],
    ['PATCH', `${L}/${id}`, {}, 422, 'invalid'],
    ['PATCH', `${L}/${id}`, { stage: 'unqualified' }, 422, 'reason_required'],
    ['POST', `${L}/${id}/stage`, { stage: 'WON' }, 422, 'invalid'],
    ['POST', `${L}/${id}/stage`, {}, 422, 'invalid'],
    ['POST', `${L}/${id}/notes`, { body: 'n'.repeat(10_001) }, 422, 'invalid'],
    ['POST', `${L}/${id}/notes`, { body: '   ' }, 422, 'invalid'],
    ['POST', `${L}/${id}/labels`, { labels: [] }, 422, 'invalid'],
    ['POST', `${L}/${id}/labels`, { labels: ['l'.repeat(65)] }, 422, 'invalid'],
    ['POST', `${L}/${id}/assign`, { assignee_id: 'me' }, 422, 'invalid'],
    ['POST', `${L}/${id}/merge`, { lead_id: id }, 422, 'invalid'],
    ['POST', `${L}/${id}/merge`, { lead_id: 2_000_000_000 }, 422, 'invalid'],
    ['GET', `${L}/999999999`, undefined, 404],
    ['GET', `${L}/abc`, undefined, 404],
    ['GET', `${L}/99999999999999999999`, undefined, 404],
    ['DELETE', `${L}/999999999`, undefined, 404],
    ['GET', `${L}?assignee=someone`, undefined, 422, 'invalid'],
    ['GET', `${L}?per_page=0`, undefined, 422, 'invalid'],
  ];
  for (const [method, path, body, status, reason] of refusals) {
    const r = await api(method, path, t.token, body);
    assert.equal(r.status, status, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}: ${r.text.slice(0, 300)}`);
    assert.equal(r.body.status, 'error', `${method} ${path}: the v3 envelope`);
    assert.equal(typeof r.body.message, 'string');
    if (reason) assert.equal(r.body.reason, reason, `${method} ${path} ${JSON.stringify(body)?.slice(0, 80)}`);
  }
  assert.deepEqual((await api('GET', `${L}/${id}`, t.token)).body.data, before, 'nothing of the lead changed');
  assert.equal((await api('GET', L, t.token)).body.data.pagination.total, 1, 'no lead made');
  assert.equal((await leadEvents(t)).length, eventsBefore, 'no event recorded');

  // Another account: A's lead id is not found on every path; nothing of A's moves.
  let checked = 0;
  for (const op of leadOperations.filter((o) => o.params.includes('lead'))) {
    const path = op.path.replace('{lead}', String(id)).replace('{label}', 'vip');
    const body = op.name === 'merge_leads' ? { lead_id: id } : bodyOf(op);
    const r = await api(op.method, path, b.token, body);
    assert.equal(r.status, 404, `${op.name}: ${r.text}`);
    assert.ok(!r.text.includes('A’s lead'), op.name);
    checked++;
  }
  assert.ok(checked >= 9, `${checked} paths`);
  // B merging A's lead into its own: A's is not one B can see.
  const own = (await upsert(b.token, { phone: person().e164 })).data.id;
  const merge = await api('POST', `${L}/${own}/merge`, b.token, { lead_id: id });
  assert.equal(merge.status, 422, merge.text);
  // B's upsert of A's person makes B's own lead.
  const bs = (await upsert(b.token, { phone: p.forms[6], name: 'B’s' })).data;
  assert.deepEqual([bs.created, bs.duplicate_ids], [true, []]);
  assert.notEqual(bs.id, id);
  assert.ok(!(await api('GET', L, b.token)).text.includes('A’s lead'));
  assert.deepEqual((await api('GET', `${L}/${id}`, t.token)).body.data, before, 'nothing of A’s changed');
});

test('100 concurrent upserts of one person in different forms make exactly one lead', { timeout: 180_000 }, async () => {
  const t = await tzTenant();
  const p = person();
  const email = `race-${Date.now()}@example.com`;
  // Each key has 120 requests a minute: the hundred go out on four keys at once.
  const keys = await Promise.all([0, 1, 2, 3].map(() => freshKey(t)));
  const mails = [email, email.toUpperCase(), ` ${email} `, `Race-${email.slice(5)}`];
  const answers = await Promise.all(
    Array.from({ length: 100 }, (_, i) => {
      const form = p.forms[i % p.forms.length]!;
      // A third also name the e-mail, in one of its forms.
      const mail = i % 3 === 0 ? { email: mails[(i / 3) % mails.length] } : {};
      return api('POST', L, keys[i % keys.length]!, { phone: form, ...mail, labels: [`l${i % 5}`] });
    }),
  );
  for (const r of answers) assert.equal(r.status, 200, r.text);
  const ids = new Set(answers.map((r) => r.body.data.id));
  assert.equal(ids.size, 1, `one lead: ${[...ids].join(', ')}`);
  assert.equal(answers.filter((r) => r.body.data.created).length, 1, 'made once');
  const list = (await api('GET', L, t.token)).body.data;
  assert.equal(list.pagination.total, 1);
  const lead = list.leads[0];
  assert.deepEqual([lead.phone, lead.email], [p.e164, email]);
  assert.deepEqual([...lead.labels].sort(), ['l0', 'l1', 'l2', 'l3', 'l4']);
  const created = (await leadEvents(t)).filter((e) => e.event === 'lead.created');
  assert.equal(created.length, 1, 'one lead.created');
});
