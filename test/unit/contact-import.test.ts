import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planBatch, numbersToMatch, capProblems, PROBLEM_CAP, type StagedRow } from '../../domain/contacts/contact-import.js';

const row = (rowNo: number, data: unknown, extra: Partial<StagedRow> = {}): StagedRow => ({
  rowNo,
  line: null,
  data,
  note: null,
  ...extra,
});

test('valid rows become inserts; invalid rows become problems keyed by row, line and field', () => {
  const plan = planBatch(
    [
      row(1, { PHONE: '0712000001', country_code: '255', name: 'Ann' }),
      row(2, { name: 'x'.repeat(161) }, { line: 3 }),
      row(3, 'text'),
      row(4, { PHONE: '1' }, { note: 'The row has more cells than the header.', line: 5 }),
    ],
    new Map(),
  );
  assert.deepEqual(
    plan.inserts.map((w) => [w.rowNo, w.fullPhoneNumber, w.name]),
    [[1, '255712000001', 'Ann']],
  );
  assert.deepEqual([plan.created, plan.updated, plan.failed], [1, 0, 3]);
  assert.deepEqual(plan.problems, [
    { row: 2, line: 3, field: 'name', message: 'The name may not be greater than 160 characters.' },
    { row: 2, line: 3, field: 'PHONE', message: 'The PHONE field is required.' },
    { row: 3, field: 'row', message: 'The contact must be an object.' },
    { row: 4, line: 5, field: 'row', message: 'The row has more cells than the header.' },
  ]);
});

test('a row matching a contact of the group by full number replaces it; is_subscribed is kept when omitted', () => {
  const plan = planBatch(
    [
      row(1, { PHONE: '+255712000001', country_code: '255', name: 'First', is_subscribed: false }),
      row(2, { PHONE: '0712000001', country_code: '255', name: 'Second', city: 'Dar' }),
    ],
    new Map([['255712000001', 42]]),
  );
  assert.equal(plan.inserts.length, 0);
  assert.deepEqual([plan.created, plan.updated], [0, 2]);
  const w = plan.updates.get(42)!;
  assert.deepEqual([w.name, w.isSubscribed, w.customFieldValues, w.rowNo], ['Second', false, { city: 'Dar' }, 2]);
});

test('repeated numbers within a batch collapse into one insert; numberless rows never match', () => {
  const plan = planBatch(
    [
      row(1, { PHONE: '0712', name: 'A' }),
      row(2, { PHONE: 'none', name: 'B' }),
      row(3, { PHONE: '0712', name: 'C', is_subscribed: '0' }),
      row(4, { PHONE: 'n/a', name: 'D' }),
    ],
    new Map([['', 7]]),
  );
  assert.deepEqual(
    plan.inserts.map((w) => [w.name, w.isSubscribed]),
    [
      ['C', false],
      ['B', undefined],
      ['D', undefined],
    ],
  );
  assert.deepEqual([plan.created, plan.updated, plan.updates.size], [3, 1, 0]);
});

test('numbers to look up exclude invalid and numberless rows', () => {
  assert.deepEqual(
    numbersToMatch([
      row(1, { PHONE: '0712', country_code: '255' }),
      row(2, { PHONE: 'x' }),
      row(3, {}),
      row(4, { PHONE: '5' }, { note: 'bad' }),
      row(5, { PHONE: '0712', country_code: '255' }),
    ]),
    ['255712'],
  );
});

test('problems are capped at 200 stored entries', () => {
  const many = Array.from({ length: 30 }, (_, i) => ({ row: i + 1, field: 'PHONE', message: 'm' }));
  assert.deepEqual(capProblems(0, many), { keep: many, truncated: false });
  assert.deepEqual(capProblems(PROBLEM_CAP - 10, many), { keep: many.slice(0, 10), truncated: true });
  assert.deepEqual(capProblems(PROBLEM_CAP, many), { keep: [], truncated: true });
  assert.deepEqual(capProblems(PROBLEM_CAP, []), { keep: [], truncated: false });
});
