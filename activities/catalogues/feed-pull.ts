import http from 'node:http';
import { Readable } from 'node:stream';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { request, type Dispatcher } from 'undici';
import { parse as csvParse } from 'csv-parse';
import { XMLParser } from 'fast-xml-parser';
import type { Config } from '../../config.js';
import type { Logger } from '../../logger.js';
import { dropStagedRows, setReceived, stagePage } from '../../services/catalogues/store/syncs.js';
import { checkDestinationText, destinationAgent, isDestinationRefusal } from '../../services/platform/destinations.js';
import { DomainError } from '../../services/platform/errors.js';
import { validateBody, withStorageBounds } from '../../services/platform/validation.js';
import { productRowSchema } from '../../services/catalogues/product-schemas.js';
import {
  dropOrphanSchedule,
  failFeedRun,
  feedForPull,
  finishFeedRun,
  openFeedRun,
  pauseFeedSchedule,
  storePulledMapping,
  type FeedTally,
  type OpenedRun,
} from '../../services/catalogues/feeds.js';
import { detectDelimiter, guessMapping, mapRecord, sniffFormat, type FeedFormat } from '../../domain/catalogues/feed-mapping.js';
import { FeedSplitError, JsonArraySplitter, MAX_ITEM_CHARS, XmlItemSplitter } from '../../domain/catalogues/feed-split.js';

// One pull of a product feed: fetch the URL (the outbound destination policy checked on every hop
// and connection, a connect/idle/total time limit, a size cap), tell what the body is from its first
// bytes (an HTML page is never a feed), read it as a stream (csv-parse; XML items and JSON array
// elements split off one at a time), map each record to a product row and stage the rows in
// chunks. Nothing here writes a product: the staged run is applied by the batch's steps.

export interface FeedActivityDeps {
  orm: MikroORM;
  log: Logger;
  config: Pick<Config, 'allowLoopbackDestinations' | 'feedTimeoutSeconds' | 'feedMaxBytes'>;
}

/** Rows per staging statement: one heartbeat each. */
export const STAGE_CHUNK_ROWS = 1000;
/** More products than this in one file is a failed run: 100 MB of feed is about 200,000 products. */
export const FEED_MAX_ROWS = 200_000;
/** Records read before the mapping is guessed (XML and JSON products need not all name the same fields). */
const GUESS_RECORDS = 100;
const MAX_REDIRECTS = 5;

/** Why a pull failed, in words the account reads on its run; retryable when a later attempt may succeed. */
export class FeedProblem extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = 'FeedProblem';
  }
}

export interface PullOutcome {
  format: FeedFormat;
  /** Records staged (the run's received). */
  rows: number;
  /** Of them, rows the product row schema accepts: what the shrink guard counts. */
  usable: number;
  unmapped: string[];
}

const rowSchema = withStorageBounds(productRowSchema);
const usableRow = (data: unknown) => {
  try {
    validateBody(rowSchema, data);
    return true;
  } catch (err) {
    if (err instanceof DomainError) return false;
    throw err;
  }
};

const mb = (bytes: number) => `${Math.round(bytes / 1048576)} MB`;

interface Opened {
  body: Dispatcher.ResponseData['body'];
  contentType: string;
  url: string;
}

/** GET the feed, following up to five redirects (each hop judged by the destination policy again). */
async function openUrl(
  url: string,
  o: { agent: Dispatcher; signal: AbortSignal; idleMs: number; maxBytes: number; policy: FeedActivityDeps['config'] },
): Promise<Opened> {
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    if ('refused' in checkDestinationText(current, o.policy))
      throw new FeedProblem('the feed URL points to a destination that is not allowed', false);
    const res = await request(current, {
      method: 'GET',
      dispatcher: o.agent,
      signal: o.signal,
      headersTimeout: o.idleMs,
      bodyTimeout: o.idleMs,
      headers: {
        accept:
          'text/csv, application/rss+xml, application/atom+xml, application/xml, text/xml, application/json, text/plain;q=0.8, */*;q=0.5',
        'user-agent': 'svc-catalogue-feed/1',
      },
    });
    const status = res.statusCode;
    const header = (name: string) => {
      const v = res.headers[name];
      return Array.isArray(v) ? v[0] : v;
    };
    if (status >= 300 && status < 400 && header('location')) {
      await res.body.dump().catch(() => {});
      current = new URL(header('location')!, current).toString();
      continue;
    }
    if (status < 200 || status >= 300) {
      await res.body.dump().catch(() => {});
      const text = `the feed URL answered ${status} ${http.STATUS_CODES[status] ?? ''}`.trim();
      // Not found, gone, forbidden: the URL itself is wrong. A busy or broken server may recover.
      throw new FeedProblem(text, status === 408 || status === 425 || status === 429 || status >= 500);
    }
    const length = Number(header('content-length'));
    if (Number.isFinite(length) && length > o.maxBytes) {
      res.body.destroy();
      throw new FeedProblem(`the feed is larger than ${mb(o.maxBytes)} (${mb(length)})`, false);
    }
    return { body: res.body, contentType: String(header('content-type') ?? ''), url: current };
  }
  throw new FeedProblem(`the feed URL redirected more than ${MAX_REDIRECTS} times`, false);
}

/** The body's text as it arrives, in the charset the server names (UTF-8 otherwise), cut off past the size cap. */
async function* textOf(first: Buffer[], rest: AsyncIterator<Buffer>, contentType: string, maxBytes: number, seen: number) {
  const charset = /charset="?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  let decoder: TextDecoder;
  try {
    decoder = new TextDecoder(charset);
  } catch {
    decoder = new TextDecoder('utf-8');
  }
  for (const b of first) yield decoder.decode(b, { stream: true });
  let bytes = seen;
  for (;;) {
    const next = await rest.next();
    if (next.done) break;
    bytes += next.value.length;
    if (bytes > maxBytes) throw new FeedProblem(`the feed is larger than ${mb(maxBytes)}`, false);
    // The SDK throttles heartbeats; a slow server trickling bytes is still a live pull.
    Context.current().heartbeat({ bytes });
    yield decoder.decode(next.value, { stream: true });
  }
  const tail = decoder.decode();
  if (tail) yield tail;
}

type FeedRecord = Record<string, unknown>;
/** A JSON element that is not an object: staged as it is, to be refused as a row. */
class NotObject {
  constructor(readonly value: unknown) {}
}

async function* csvRecords(text: AsyncIterable<string>, delimiter: string): AsyncGenerator<FeedRecord> {
  const parser = csvParse({
    delimiter,
    bom: true,
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
    max_record_size: MAX_ITEM_CHARS,
  });
  const source = Readable.from(text);
  // A failed download (size cap, timeout) ends the parse with its own error.
  source.on('error', (err) => parser.destroy(err));
  source.pipe(parser);
  let header: string[] | null = null;
  try {
    for await (const cells of parser as AsyncIterable<string[]>) {
      if (!header) {
        header = cells.map((h) => h.trim());
        continue;
      }
      const record: FeedRecord = {};
      header.forEach((name, i) => {
        if (name !== '' && i < cells.length && !(name in record)) record[name] = cells[i];
      });
      yield record;
    }
  } finally {
    source.destroy();
  }
}

const xmlParser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  // Values stay text: a sku of 0012 is not the number 12.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  htmlEntities: true,
});

/** One item element as a record: its child elements (and attributes) by name, as written (`g:price`). */
function itemRecord(fragment: string): FeedRecord {
  const item = Object.values(xmlParser.parse(fragment) as Record<string, unknown>)[0];
  return item !== null && typeof item === 'object' && !Array.isArray(item) ? (item as FeedRecord) : {};
}

async function* xmlRecords(text: AsyncIterable<string>): AsyncGenerator<FeedRecord> {
  const splitter = new XmlItemSplitter();
  for await (const chunk of text) {
    for (const fragment of splitter.push(chunk)) {
      yield itemRecord(fragment);
    }
  }
  for (const fragment of splitter.end()) yield itemRecord(fragment);
}

async function* jsonRecords(text: AsyncIterable<string>): AsyncGenerator<FeedRecord | NotObject> {
  const splitter = new JsonArraySplitter();
  for await (const chunk of text) {
    for (const element of splitter.push(chunk)) {
      let value: unknown;
      try {
        value = JSON.parse(element);
      } catch (err) {
        throw new FeedProblem(`the JSON could not be read: ${(err as Error).message.slice(0, 200)}`, false);
      }
      yield value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as FeedRecord) : new NotObject(value);
    }
  }
  splitter.end();
}

/** A failure of the download or the file as the run reports it. */
function feedProblemOf(err: unknown, timeoutSeconds: number): FeedProblem | null {
  if (err instanceof FeedProblem) return err;
  if (isDestinationRefusal(err)) return new FeedProblem('the feed URL points to a destination that is not allowed', false);
  if (err instanceof FeedSplitError) return new FeedProblem(`the feed could not be read: ${err.message}`, false);
  const e = err as { name?: unknown; code?: unknown; message?: unknown; cause?: { code?: unknown } };
  // DOMExceptions (the time limit's abort) carry a numeric code.
  const code = [e.code, e.cause?.code].find((c): c is string => typeof c === 'string') ?? '';
  if (code.startsWith('CSV_')) return new FeedProblem(`the CSV could not be read: ${String(e.message).slice(0, 200)}`, false);
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    ['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT'].includes(code)
  )
    return new FeedProblem(`the feed URL did not answer within ${timeoutSeconds} s`, true);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new FeedProblem('the feed URL’s host name does not resolve', true);
  if (code === 'ECONNREFUSED') return new FeedProblem('the feed URL refused the connection', true);
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return new FeedProblem('the connection to the feed URL broke off', true);
  if (code.startsWith('ERR_TLS') || code.includes('CERT'))
    return new FeedProblem(`the feed URL’s TLS certificate was refused (${code})`, true);
  return null;
}

export function createFeedActivities(deps: FeedActivityDeps) {
  const timeoutMs = deps.config.feedTimeoutSeconds * 1000;
  const idleMs = Math.min(timeoutMs, 60_000);
  const agent = destinationAgent(deps.config, { timeoutMs: Math.min(timeoutMs, 10_000) });

  /** Stages one chunk as one page (rows numbered on from its first); a retried chunk (same rows, same numbers) adds nothing. */
  const stage = (syncId: number, rows: Array<{ n: number; d: unknown }>) =>
    stagePage(
      deps.orm.em.fork(),
      syncId,
      rows[0].n,
      rows.map((r) => r.d),
    );

  async function pull(input: { accountId: number; feedId: number; syncId: number }): Promise<PullOutcome> {
    const em = deps.orm.em.fork();
    const feed = await feedForPull(em, input.accountId, input.feedId);
    if (!feed) throw new FeedProblem('the feed was deleted', false);
    // A retry starts the file again from its first row.
    await dropStagedRows(em, input.syncId);
    const ctx = Context.current();
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ctx.cancellationSignal]);
    const opened = await openUrl(feed.url, { agent, signal, idleMs, maxBytes: deps.config.feedMaxBytes, policy: deps.config });
    try {
      // The first bytes decide the format; the first line the CSV delimiter.
      const it = (opened.body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      const head: Buffer[] = [];
      let seen = 0;
      while (seen < 4096 || (!Buffer.concat(head).includes(10) && seen < 65536)) {
        const next = await it.next();
        if (next.done) break;
        head.push(next.value);
        seen += next.value.length;
        if (seen > deps.config.feedMaxBytes) throw new FeedProblem(`the feed is larger than ${mb(deps.config.feedMaxBytes)}`, false);
      }
      const headText = new TextDecoder().decode(Buffer.concat(head));
      const format = sniffFormat(headText, opened.contentType);
      if (format === 'html') throw new FeedProblem('the URL answered an HTML page, not a feed', false);
      const text = textOf(head, it, opened.contentType, deps.config.feedMaxBytes, seen);
      const records: AsyncGenerator<FeedRecord | NotObject> =
        format === 'csv' ? csvRecords(text, detectDelimiter(headText)) : format === 'xml' ? xmlRecords(text) : jsonRecords(text);

      // The mapping: guessed from the first records' columns over what the feed has saved.
      const first: Array<FeedRecord | NotObject> = [];
      let nextRecord = await records.next();
      while (!nextRecord.done && first.length < GUESS_RECORDS) {
        first.push(nextRecord.value);
        if (first.length < GUESS_RECORDS) nextRecord = await records.next();
      }
      const headers = [...new Set(first.flatMap((r) => (r instanceof NotObject ? [] : Object.keys(r))))];
      const guess = guessMapping(headers, feed.mapping);
      await storePulledMapping(em, input.accountId, input.feedId, guess.mapping, format);
      if (first.length > 0 && guess.missing.length > 0)
        throw new FeedProblem(
          `no column of the feed maps to ${guess.missing.join(' or ')} (its columns: ${headers.slice(0, 30).join(', ')}); set the feed’s mapping`,
          false,
        );

      let rows = 0;
      let usable = 0;
      let chunk: Array<{ n: number; d: unknown }> = [];
      const take = async (record: FeedRecord | NotObject) => {
        rows += 1;
        if (rows > FEED_MAX_ROWS) throw new FeedProblem(`the feed has more than ${FEED_MAX_ROWS} products`, false);
        const data =
          record instanceof NotObject
            ? record.value
            : mapRecord(record, guess.mapping, { defaultCurrency: feed.default_currency, baseUrl: opened.url }).data;
        if (usableRow(data)) usable += 1;
        chunk.push({ n: rows, d: data });
        if (chunk.length >= STAGE_CHUNK_ROWS) {
          await stage(input.syncId, chunk);
          chunk = [];
          ctx.heartbeat({ rows });
        }
      };
      for (const r of first) await take(r);
      if (!nextRecord.done && first.length >= GUESS_RECORDS) {
        for (nextRecord = await records.next(); !nextRecord.done; nextRecord = await records.next()) await take(nextRecord.value);
      }
      if (chunk.length) await stage(input.syncId, chunk);
      await setReceived(em, input.syncId, rows);
      deps.log.info({ account: input.accountId, feed: input.feedId, sync: input.syncId, format, rows, usable }, 'feed pulled');
      return { format, rows, usable, unmapped: guess.unmapped };
    } finally {
      opened.body.destroy();
    }
  }

  return {
    /** Starts a pull's run (see openFeedRun); a run the API has not committed yet is retried, then given up by the workflow. */
    async openFeedRun(input: {
      accountId: number;
      feedId: number;
      syncId?: number;
    }): Promise<OpenedRun | { skipped: 'feed deleted' | 'feed switched off' | 'pull under way' }> {
      const opened = await openFeedRun(deps.orm.em.fork(), input);
      if (opened === null) throw ApplicationFailure.retryable(`feed run ${input.syncId} is not visible`, 'FeedRunNotVisible');
      if ('skipped' in opened && opened.skipped === 'feed deleted' && input.syncId === undefined)
        await dropOrphanSchedule(Context.current().client, input.accountId, input.feedId);
      if ('skipped' in opened)
        deps.log.info({ account: input.accountId, feed: input.feedId, skipped: opened.skipped }, 'feed pull skipped');
      else deps.log.info({ account: input.accountId, feed: input.feedId, sync: opened.syncId, mode: opened.mode }, 'feed pull started');
      return opened;
    },

    /**
     * Downloads, reads, maps and stages the feed. A feed that is definitively bad (not found, an
     * HTML page, too large, unreadable, no name or price column) fails at once; a timeout, a 5xx or
     * a broken connection is retried by the workflow's policy, then fails the run with the reason.
     */
    async pullFeed(input: { accountId: number; feedId: number; syncId: number }): Promise<PullOutcome> {
      try {
        return await pull(input);
      } catch (err) {
        if (Context.current().cancellationSignal.aborted) throw err;
        const problem = feedProblemOf(err, deps.config.feedTimeoutSeconds);
        if (!problem) throw err;
        deps.log.warn({ account: input.accountId, feed: input.feedId, sync: input.syncId, reason: problem.message }, 'feed pull failed');
        throw ApplicationFailure.create({ message: problem.message, type: 'FeedProblem', nonRetryable: !problem.retryable });
      }
    },

    /** Fails a run that was not applied; a feed this switched off has its schedule paused. */
    async failFeedRun(input: { accountId: number; feedId: number; syncId: number; reason: string }): Promise<FeedTally | null> {
      const tally = await failFeedRun(deps.orm.em.fork(), input);
      // Info: the cause was logged where it happened ('feed pull failed'); this is the run's end.
      deps.log.info(
        {
          account: input.accountId,
          feed: input.feedId,
          sync: input.syncId,
          status: 'failed',
          reason: input.reason,
          enabled: tally?.enabled,
        },
        'feed pull finished',
      );
      if (tally && !tally.enabled && tally.schedule) await pauseFeedSchedule(Context.current().client, input.accountId, input.feedId);
      return tally;
    },

    /** Counts an applied run on its feed (completed resets the failures; failed adds one). */
    async finishFeedRun(input: {
      accountId: number;
      feedId: number;
      syncId: number;
      usable: number;
    }): Promise<{ status: string; tally: FeedTally | null }> {
      const out = await finishFeedRun(deps.orm.em.fork(), input);
      deps.log.info(
        {
          account: input.accountId,
          feed: input.feedId,
          sync: input.syncId,
          status: out.status,
          usable: input.usable,
          enabled: out.tally?.enabled,
        },
        'feed pull finished',
      );
      if (out.tally && !out.tally.enabled && out.tally.schedule)
        await pauseFeedSchedule(Context.current().client, input.accountId, input.feedId);
      return out;
    },
  };
}

export type FeedActivities = ReturnType<typeof createFeedActivities>;
