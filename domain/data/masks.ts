import type { ColumnDef, FieldMask } from './definitions.js';

// Field masks (Record: "field masks apply per caller to values and titles; a masked string is only
// a display value"). Which masks apply to a caller is access.ts's masksFor; this is what a masked
// value looks like. A masked value is display-only: a PATCH that sends the display string back
// for a masked column is an ordinary write of that string (validated like any other value), so a
// client must not echo masked values it did not mean to change.

export const MASK_FULL = '••••••';
const MASK_SHORT = '••••';

/**
 * A value as a caller under `style` sees it. Empty values stay empty (null): whether a field is
 * filled is not what masks hide. `last4` of text of four characters or fewer shows none of it
 * (showing "the last four" would show it all); `email` of something that is not an address
 * falls back to full.
 */
export function maskValue(style: FieldMask['style'], value: unknown): unknown {
  if (value === null || value === undefined) return null;
  const text = typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
  if (style === 'full' || text === null) return MASK_FULL;
  if (style === 'last4') {
    const chars = [...text];
    return chars.length <= 4 ? MASK_SHORT : MASK_SHORT + chars.slice(-4).join('');
  }
  const at = text.lastIndexOf('@');
  if (at < 1 || at === text.length - 1) return MASK_FULL;
  return `${[...text][0]}•••@${text.slice(at + 1)}`;
}

/** A record's data with the caller's masks applied (keys kept; only masked values change). */
export function maskData(data: Record<string, unknown>, masks: ReadonlyMap<string, FieldMask>): Record<string, unknown> {
  if (!masks.size) return data;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) {
    const m = masks.get(k);
    out[k] = m ? maskValue(m.style, v) : v;
  }
  return out;
}

/** The column naming a record: the table's title_column, else its first text column by position; null when neither. */
export function titleColumn(titleColumnKey: string | null, columns: readonly Pick<ColumnDef, 'key' | 'type' | 'position'>[]) {
  if (titleColumnKey && columns.some((c) => c.key === titleColumnKey)) return titleColumnKey;
  const text = [...columns].sort((a, b) => a.position - b.position).find((c) => c.type === 'text');
  return text?.key ?? null;
}

/** A stored value as title text: lists joined, a file by its name; null when empty. */
export function titleText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) {
    const parts = value.map(titleText).filter((s): s is string => s !== null);
    return parts.length ? parts.join(', ') : null;
  }
  if (typeof value === 'object') {
    const name = (value as { name?: unknown }).name;
    return typeof name === 'string' && name ? name : null;
  }
  const s = String(value);
  return s.trim() ? s : null;
}

/** The title as a caller sees it: the title column's value, masked when that column is masked for the caller. */
export function maskedTitle(value: unknown, mask: FieldMask | undefined): string | null {
  const text = titleText(value);
  if (text === null || !mask) return text;
  return maskValue(mask.style, text) as string;
}
