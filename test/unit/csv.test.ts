import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCsv, csvToObjects, CsvError } from '../../services/contacts/csv.js';

const cells = (s: string) => parseCsv(s).map((r) => r.cells);

test('plain records with LF, CRLF and CR endings; a trailing newline adds no record', () => {
  assert.deepEqual(cells('a,b\n1,2\n'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  assert.deepEqual(cells('a,b\r\n1,2\r\n3,4'), [
    ['a', 'b'],
    ['1', '2'],
    ['3', '4'],
  ]);
  assert.deepEqual(cells('a,b\r1,2'), [
    ['a', 'b'],
    ['1', '2'],
  ]);
  assert.deepEqual(cells(''), []);
});

test('quoted cells hold commas, doubled quotes and line breaks; empty cells are kept', () => {
  assert.deepEqual(cells('"Lee, Ann","say ""hi""","two\nlines",,x'), [['Lee, Ann', 'say "hi"', 'two\nlines', '', 'x']]);
  assert.deepEqual(cells('a,,\n'), [['a', '', '']]);
  assert.deepEqual(cells('"",x'), [['', 'x']]);
  assert.deepEqual(cells('a"b,c'), [['a"b', 'c']], 'a quote inside an unquoted cell is literal');
});

test('blank lines are not records and record lines count physical lines', () => {
  const r = parseCsv('h\n\n"multi\r\nline"\n\nlast\n');
  assert.deepEqual(
    r.map((x) => x.cells),
    [['h'], ['multi\r\nline'], ['last']],
  );
  assert.deepEqual(
    r.map((x) => x.line),
    [1, 3, 6],
  );
});

test('a UTF-8 byte order mark is ignored', () => {
  assert.deepEqual(cells('\ufeffPHONE\n1'), [['PHONE'], ['1']]);
});

test('an unclosed quote is an error naming the line where the reader gave up', () => {
  assert.throws(
    () => parseCsv('a\n"open\nstill open'),
    (e: unknown) => e instanceof CsvError && e.line === 3,
  );
});

test('csvToObjects: the header names the keys, short rows omit cells, long rows are flagged', () => {
  const t = csvToObjects(' PHONE ,NAME,city\n0712,Ann,Dar\n0713,Bob\n0714,Cy,Moshi,extra\n0715,Di,Arusha,\n');
  assert.deepEqual(t.header, ['PHONE', 'NAME', 'city']);
  assert.deepEqual(
    t.rows.map((r) => r.values),
    [
      { PHONE: '0712', NAME: 'Ann', city: 'Dar' },
      { PHONE: '0713', NAME: 'Bob' },
      { PHONE: '0714', NAME: 'Cy', city: 'Moshi' },
      { PHONE: '0715', NAME: 'Di', city: 'Arusha' },
    ],
  );
  assert.deepEqual(
    t.rows.map((r) => r.extraCells),
    [false, false, true, false],
    'an empty trailing cell is tolerated',
  );
  assert.deepEqual(csvToObjects(''), { header: [], rows: [] });
});
