import { parse, CsvError as ParseError } from 'csv-parse/sync';

// Contact-import CSV: RFC 4180 (comma separated, double-quote quoting, "" for a quote, line breaks
// inside quotes, CRLF/LF/CR endings, a UTF-8 BOM ignored), read by csv-parse.

export class CsvError extends Error {
  constructor(
    message: string,
    public readonly line: number,
  ) {
    super(`${message} (line ${line})`);
  }
}

export interface CsvRecord {
  line: number;
  cells: string[];
}

/** Records in file order with the physical line each starts on; entirely empty lines are not records. */
export function parseCsv(input: string): CsvRecord[] {
  let rows: Array<{ record: string[]; raw: string }>;
  try {
    rows = parse(input, {
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: true,
      raw: true,
    }) as unknown as typeof rows;
  } catch (err) {
    if (err instanceof ParseError) throw new CsvError(err.message.split(':')[0], Number((err as unknown as { lines?: number }).lines ?? 0));
    throw err;
  }
  // `raw` holds the skipped blank lines before a record, the record and its line break: enough to
  // tell the line each record starts on, which is what an import problem report names.
  let line = 0;
  return rows.map(({ record, raw }) => {
    const leading = /^(?:\r\n|\r|\n)*/.exec(raw)![0];
    const body = raw.slice(leading.length).replace(/(?:\r\n|\r|\n)$/, '');
    const start = line + 1 + breaks(leading);
    line = start + breaks(body);
    return { line: start, cells: record };
  });
}

const breaks = (s: string) => s.match(/\r\n|\r|\n/g)?.length ?? 0;

export interface CsvTable {
  header: string[];
  rows: Array<{ line: number; values: Record<string, string>; extraCells: boolean }>;
}

/**
 * The first record is the header (names trimmed, kept as written, so PHONE and phone differ as in
 * JSON). A short row leaves its missing columns out; a long row is flagged so the import can report it.
 */
export function csvToObjects(input: string): CsvTable {
  const [head, ...body] = parseCsv(input);
  if (!head) return { header: [], rows: [] };
  const header = head.cells.map((h) => h.trim());
  const rows = body.map((r) => {
    const values: Record<string, string> = {};
    header.forEach((name, idx) => {
      if (name !== '' && idx < r.cells.length) values[name] = r.cells[idx];
    });
    return { line: r.line, values, extraCells: r.cells.length > header.length && r.cells.slice(header.length).some((c) => c !== '') };
  });
  return { header, rows };
}
