// Request bytes as text. Buffer#toString('utf8') replaces bytes that are not UTF-8 with U+FFFD, so a
// body with a stray 0xff was stored with replacement characters the client never sent; a request
// body is read here instead, and bytes that are not UTF-8 refuse the request (400) before it is parsed.

// ignoreBOM: a byte order mark stays in the text (and JSON.parse refuses it), as it did before.
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The text the bytes encode, or null when they are not well-formed UTF-8. */
export function decodeUtf8(bytes: Uint8Array): string | null {
  try {
    return strict.decode(bytes);
  } catch {
    return null;
  }
}
