import crypto from 'node:crypto';
import { loadConfig } from '../../config.js';
import { decodeUtf8 } from '../../domain/platform/utf8.js';

// The records cursor as a client holds it: its content (domain/data/cursor.ts, JSON text holding
// the last row's sort value) encrypted and authenticated with AES-256-GCM under a key derived from
// DATA_CURSOR_SECRET. A caller learns nothing of the sort value from a cursor (a masked column's
// value, or one it could read when the cursor was made and may not read now), and cannot forge or
// alter one. The associated data binds it to the account and the table, so a cursor of another
// table or account fails authentication and restarts the list like any invalid cursor. Every API
// process of a deployment derives the same key from the shared secret: a page made by one process
// is continued by any other, with no state between them. Changing the secret only makes the
// cursors out there restart at page one.

const VERSION = 2;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A sealed cursor longer than this is not one we made (the content is at most about 8 KiB). */
const MAX_SEALED = 16_384;

/** What a records cursor is sealed to: a cursor of another account's or table's list never opens there. */
export const recordsCursorBinding = (accountId: number, tableId: string) => `data-records:${accountId}:${tableId}`;

let key: Buffer | null = null;

function cursorKey(): Buffer {
  // Read once per process through config.ts, as services/orders/ttl.ts reads its unit: listRecords carries no config.
  key ??= Buffer.from(crypto.hkdfSync('sha256', loadConfig().dataCursorSecret, '', 'data records cursor v2', 32));
  return key;
}

/** The cursor a client is given for this content, bound to `binding` (account and table). */
export function sealCursor(content: string, binding: string): string {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', cursorKey(), iv);
  cipher.setAAD(Buffer.from(binding));
  const body = Buffer.concat([cipher.update(content, 'utf8'), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), iv, body, cipher.getAuthTag()]).toString('base64url');
}

/** The content of a cursor we sealed for this binding; null for anything else (garbage, tampered, another table's). */
export function openCursor(text: string | undefined | null, binding: string): string | null {
  if (!text || text.length > MAX_SEALED || !/^[A-Za-z0-9_-]+$/.test(text)) return null;
  const raw = Buffer.from(text, 'base64url');
  if (raw.length < 1 + IV_BYTES + TAG_BYTES || raw[0] !== VERSION) return null;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', cursorKey(), raw.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(Buffer.from(binding));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    return decodeUtf8(Buffer.concat([decipher.update(raw.subarray(1 + IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]));
  } catch {
    return null;
  }
}
