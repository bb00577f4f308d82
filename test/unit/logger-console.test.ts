import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { takeConsole } from '../../logger.js';

test('console output of a library becomes a JSON line of the process logger, at its level', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const original = console.warn;
  const restore = takeConsole(pino({ level: 'debug', base: { role: 'api' } }, sink));
  try {
    // The MCP SDK's line at every API start (createMcpHandler with responseMode 'json').
    console.warn("responseMode: 'json' drops mid-call notifications.");
    console.log('%d rows', 3);
    console.error(new Error('boom').message);
  } finally {
    restore();
  }
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(
    lines.map((l) => [l.level, l.msg, l.console, l.role]),
    [
      [40, "responseMode: 'json' drops mid-call notifications.", true, 'api'],
      [30, '3 rows', true, 'api'],
      [50, 'boom', true, 'api'],
    ],
  );
  assert.equal(console.warn, original, 'the console is given back');
});
