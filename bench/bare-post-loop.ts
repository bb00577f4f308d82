// A bare POST loop in a process of its own: `count` POSTs of one body to `url`, `concurrency` at a
// time over an undici keep-alive agent of as many connections (the webhook dispatcher's client and
// pool). Prints the load result as JSON. Run by bench/webhook-delivery.ts beside the deliveries:
//   npx tsx bench/bare-post-loop.ts <url> <count> <concurrency> <body-file>
import fs from 'node:fs';
import { Agent, request } from 'undici';
import { load } from './lib.js';

const [url, count, concurrency, bodyFile] = process.argv.slice(2);
const body = fs.readFileSync(bodyFile, 'utf8');
const agent = new Agent({ connections: Number(concurrency), keepAliveTimeout: 10_000 });
const r = await load(Number(concurrency), Number(count), 900, async () => {
  const res = await request(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, dispatcher: agent });
  await res.body.dump();
  return String(res.statusCode);
});
await agent.close();
process.stdout.write(`${JSON.stringify(r)}\n`);
