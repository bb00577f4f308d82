// Splits a feed body into its products as it arrives, so a 50,000-product file is never one
// document in memory: RSS `<item>`, Atom `<entry>` or `<product>` elements of an XML feed, and the
// elements of a JSON feed's array (the root array, or `products`/`items`/`data`/`entries` of a
// root object). Each piece is then parsed on its own (fast-xml-parser, JSON.parse). Pure: text in,
// text out.

export class FeedSplitError extends Error {}

/** Meta refuses XML lines over 5 MiB; one product larger than this is a broken feed, not a product. */
export const MAX_ITEM_CHARS = 5 * 1024 * 1024;

const ITEM_OPEN = /<(item|entry|product)(?=[\s>/])/;
const FEED_ROOT = /<(rss|feed|channel|products|items|catalog|catalogue)(?=[\s>/])/i;

/**
 * XML: finds the item element name from the first one seen (item, entry or product, whichever comes
 * first) and yields each `<name …>…</name>` fragment. CDATA sections and comments are skipped
 * while looking for the end, so a description holding `</item>` cannot cut an item short.
 */
export class XmlItemSplitter {
  private buf = '';
  private tag: string | null = null;
  private start = -1;
  private scan = 0;
  private seenRoot = false;
  private items = 0;
  /** Set at the end of the body: text that could still grow into a marker never will. */
  private final = false;

  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    if (!this.seenRoot && FEED_ROOT.test(this.buf.slice(0, 1 << 16))) this.seenRoot = true;
    for (;;) {
      if (this.start < 0) {
        const found = this.findOpen();
        if (found < 0) {
          // Keep a tail long enough to hold a split `<product`.
          this.buf = this.buf.slice(Math.max(0, this.buf.length - 16));
          this.scan = 0;
          return out;
        }
        this.start = found;
        this.scan = found + 1;
      }
      const end = this.findClose();
      if (end < 0) {
        if (this.buf.length - this.start > MAX_ITEM_CHARS)
          throw new FeedSplitError(`a <${this.tag}> element is larger than ${MAX_ITEM_CHARS / 1048576} MB`);
        this.buf = this.buf.slice(this.start);
        this.scan -= this.start;
        this.start = 0;
        return out;
      }
      out.push(this.buf.slice(this.start, end));
      this.items += 1;
      this.buf = this.buf.slice(end);
      this.start = -1;
      this.scan = 0;
    }
  }

  /** At the end of the body: the last items, if any were waiting; a body that is neither a feed nor has items is not a product feed. */
  end(): string[] {
    this.final = true;
    const last = this.push('');
    if (this.start >= 0) throw new FeedSplitError(`the XML ends inside a <${this.tag}> element`);
    if (this.items === 0 && !this.seenRoot)
      throw new FeedSplitError('the XML is not an RSS, Atom or product feed (no <item>, <entry> or <product>)');
    return last;
  }

  private findOpen(): number {
    if (this.tag) {
      const re = new RegExp(`<${this.tag}(?=[\\s>/])`, 'g');
      re.lastIndex = this.scan;
      return re.exec(this.buf)?.index ?? -1;
    }
    const m = ITEM_OPEN.exec(this.buf);
    if (!m) return -1;
    this.tag = m[1];
    return m.index;
  }

  /** The index just past the item's end tag (or its own `/>`), or -1 when it has not arrived. */
  private findClose(): number {
    const close = `</${this.tag}`;
    let i = this.scan;
    // A self-closing item (`<item/>`) is an empty product.
    const firstGt = this.buf.indexOf('>', this.start);
    if (firstGt >= 0 && this.buf[firstGt - 1] === '/' && this.scan <= firstGt) return firstGt + 1;
    for (;;) {
      const lt = this.buf.indexOf('<', i);
      if (lt < 0) {
        this.scan = this.buf.length;
        return -1;
      }
      if (this.buf.startsWith('<![CDATA[', lt) || this.buf.startsWith('<!--', lt)) {
        const endMark = this.buf.startsWith('<!--', lt) ? '-->' : ']]>';
        const e = this.buf.indexOf(endMark, lt);
        if (e < 0) {
          this.scan = lt;
          return -1;
        }
        i = e + endMark.length;
        continue;
      }
      // Wait until the text at `<` is long enough to tell a CDATA section, a comment or the end tag.
      if (!this.final && this.buf.length - lt < Math.max(close.length + 2, '<![CDATA['.length)) {
        this.scan = lt;
        return -1;
      }
      if (this.buf.startsWith(close, lt) && /[\s>]/.test(this.buf[lt + close.length] ?? '')) {
        const gt = this.buf.indexOf('>', lt);
        if (gt < 0) {
          this.scan = lt;
          return -1;
        }
        return gt + 1;
      }
      i = lt + 1;
    }
  }
}

const ARRAY_KEYS = new Set(['products', 'items', 'data', 'entries']);

/**
 * JSON: the root array's elements, or those of the first `products`, `items`, `data` or `entries`
 * array of a root object; each element is yielded as its JSON text. Anything else is refused at
 * the end.
 */
export class JsonArraySplitter {
  private buf = '';
  private i = 0;
  private depth = 0;
  private inString = false;
  private escape = false;
  /** Where the string being read at depth 1 of the root object began (a key candidate). */
  private stringStart = -1;
  private lastKey: string | null = null;
  private awaitingValueOf: string | null = null;
  /** Depth of the product array's elements once found (1 for a root array's container). */
  private arrayDepth = -1;
  private elementStart = -1;
  private state: 'root' | 'object' | 'array' | 'done' = 'root';
  private elements = 0;

  push(text: string): string[] {
    this.buf += text;
    const out: string[] = [];
    const b = this.buf;
    for (; this.i < b.length; this.i++) {
      const c = b[this.i];
      if (this.inString) {
        if (this.escape) this.escape = false;
        else if (c === '\\') this.escape = true;
        else if (c === '"') {
          this.inString = false;
          if (this.stringStart >= 0) {
            try {
              this.lastKey = JSON.parse(b.slice(this.stringStart, this.i + 1)) as string;
            } catch {
              this.lastKey = null;
            }
            this.stringStart = -1;
          }
        }
        continue;
      }
      if (c === ' ' || c === '\n' || c === '\r' || c === '\t' || c === '\uFEFF') continue;
      if (this.state === 'root') {
        if (c === '[') {
          this.state = 'array';
          this.depth = 1;
          this.arrayDepth = 1;
        } else if (c === '{') {
          this.state = 'object';
          this.depth = 1;
        } else throw new FeedSplitError('the JSON is neither an array nor an object');
        continue;
      }
      if (this.state === 'done') continue;
      if (this.state === 'array' && this.depth === this.arrayDepth && this.elementStart < 0) {
        if (c === ',') continue;
        if (c === ']') {
          this.state = 'done';
          this.depth -= 1;
          continue;
        }
        this.elementStart = this.i;
      }
      if (this.state === 'array' && this.depth === this.arrayDepth && this.elementStart >= 0 && (c === ',' || c === ']')) {
        out.push(b.slice(this.elementStart, this.i).trim());
        this.elements += 1;
        this.elementStart = -1;
        if (c === ']') {
          this.state = 'done';
          this.depth -= 1;
        }
        continue;
      }
      if (this.state === 'object' && this.depth === 1) {
        if (c === '"') {
          this.stringStart = this.i;
          this.inString = true;
          continue;
        }
        if (c === ':') {
          this.awaitingValueOf = this.lastKey;
          continue;
        }
        if (this.awaitingValueOf !== null) {
          const key = this.awaitingValueOf;
          this.awaitingValueOf = null;
          if (c === '[' && ARRAY_KEYS.has(key)) {
            this.state = 'array';
            this.depth = 2;
            this.arrayDepth = 2;
            continue;
          }
        }
      }
      if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth += 1;
      else if (c === '}' || c === ']') this.depth -= 1;
    }
    // Keep only what an unfinished element or key still needs.
    const keep = this.elementStart >= 0 ? this.elementStart : this.stringStart >= 0 ? this.stringStart : this.i;
    if (this.elementStart >= 0 && this.i - this.elementStart > MAX_ITEM_CHARS)
      throw new FeedSplitError(`a product of the JSON is larger than ${MAX_ITEM_CHARS / 1048576} MB`);
    this.buf = b.slice(keep);
    this.i -= keep;
    if (this.elementStart >= 0) this.elementStart -= keep;
    if (this.stringStart >= 0) this.stringStart -= keep;
    return out;
  }

  end(): void {
    if (this.state === 'array') throw new FeedSplitError('the JSON ends inside the product array');
    if (this.state !== 'done')
      throw new FeedSplitError('the JSON has no product array (a root array, or products or items of a root object)');
  }

  get count(): number {
    return this.elements;
  }
}
