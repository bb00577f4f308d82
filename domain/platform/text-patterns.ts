// Patterns of text rules the service states in its schemas, written out class by class so a
// generator reading them in another regex engine (Schemathesis, in Python) admits exactly what
// JavaScript does: no \s (Python's also matches U+001C-U+001F, which trim keeps) and no \d
// (Python's matches any Unicode digit). Pure: no I/O.

/** Exactly what String.prototype.trim removes (WhiteSpace and LineTerminator), as a class body. */
export const TRIM_WHITESPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
/** Text that is not blank once trimmed, without a NUL: a field the service trims and then requires (a group subject). */
export const NOT_BLANK = `^[^\\u0000]*[^\\u0000${TRIM_WHITESPACE}][^\\u0000]*$`;
