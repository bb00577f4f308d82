import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { createSimulator, type RunningSimulator, type Simulator } from '../../simulator/app.js';
import { createMetaSocial } from '../../providers/meta-social/index.js';
import type { SocialPublisher } from '../../providers/types.js';

// The simulator's Facebook Page and Instagram publishing, in process, with the real adapter: the
// schedule window of a native Facebook schedule, the container's life (IN_PROGRESS, FINISHED, ERROR,
// EXPIRED on the simulator's clock), media_publish's refusals and the rolling 24 h limit, and the
// adapter's reading of each refusal as transient or final.
let sim: Simulator;
let running: RunningSimulator;
let base: string;
let social: SocialPublisher;
const TOKEN = 'EAAG-page-token';

before(async () => {
  sim = createSimulator({ logger: pino({ level: 'silent' }) });
  running = await sim.listen(0);
  base = `${running.url}/graph/v21.0`;
  social = createMetaSocial({ baseUrl: base, timeoutMs: 5000 });
});
after(async () => {
  await running?.close();
});

const graph = async (method: string, path: string, body?: unknown, token = TOKEN) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as any };
};
const control = (path: string, body: unknown) =>
  fetch(`${running.url}/_sim/social${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
const unix = (ms: number) => Math.floor((Date.now() + ms) / 1000);
const noProgress = { containerId: null, onContainer: async () => {} };
const IMAGE = { type: 'image' as const, url: 'https://cdn.example.com/a.jpg' };

test('Facebook feed: a native schedule from 10 minutes to 30 days, only unpublished; published when the clock passes it', async () => {
  const page = '1000001';
  const tooSoon = await graph('POST', `/${page}/feed`, { message: 'hi', published: false, scheduled_publish_time: unix(5 * 60_000) });
  assert.deepEqual([tooSoon.status, tooSoon.body.error.code, tooSoon.body.error.type], [400, 100, 'OAuthException']);
  const tooFar = await graph('POST', `/${page}/feed`, { message: 'hi', published: false, scheduled_publish_time: unix(31 * 86_400_000) });
  assert.equal(tooFar.body.error.code, 100);
  const published = await graph('POST', `/${page}/feed`, { message: 'hi', scheduled_publish_time: unix(3_600_000) });
  assert.match(published.body.error.message, /published=false/);
  const ok = await graph('POST', `/${page}/feed`, { message: 'later', published: false, scheduled_publish_time: unix(3_600_000) });
  assert.match(ok.body.id, new RegExp(`^${page}_\\d+$`));
  assert.equal((await graph('GET', `/${page}/scheduled_posts`)).body.data.length, 1);
  await control('/clock', { advance_ms: 2 * 3_600_000 });
  assert.equal((await graph('GET', `/${page}/scheduled_posts`)).body.data.length, 0);
  assert.equal((await graph('GET', `/${ok.body.id}`)).body.is_published, true);
  await control('/reset', {});
  const noText = await graph('POST', `/${page}/feed`, {});
  assert.equal(noText.body.error.code, 100);
  const expired = await graph('POST', `/${page}/feed`, { message: 'x' }, 'expired-token');
  assert.deepEqual([expired.status, expired.body.error.code], [401, 190]);
});

test('Instagram: a container is IN_PROGRESS then FINISHED; media_publish refuses one not ready, expired or foreign; 24 h limit', async () => {
  const ig = '2000001';
  await control('/config', { containerPolls: 2, publishLimit: 2 });
  const c = await graph('POST', `/${ig}/media`, { image_url: IMAGE.url, caption: 'one' });
  const early = await graph('POST', `/${ig}/media_publish`, { creation_id: c.body.id });
  assert.deepEqual([early.body.error.code, early.body.error.error_subcode], [9007, 2207027]);
  assert.equal((await graph('GET', `/${c.body.id}?fields=status_code,status`)).body.status_code, 'IN_PROGRESS');
  assert.equal((await graph('GET', `/${c.body.id}?fields=status_code,status`)).body.status_code, 'FINISHED');
  const foreign = await graph('POST', `/2000002/media_publish`, { creation_id: c.body.id });
  assert.deepEqual([foreign.body.error.code, foreign.body.error.error_subcode], [24, 2207008]);
  assert.ok((await graph('POST', `/${ig}/media_publish`, { creation_id: c.body.id })).body.id);

  // Through the adapter: the second post of the day, then the limit (final, with Meta's subcode).
  assert.equal(
    (
      await social.publish(
        { platform: 'instagram', externalId: ig, accessToken: TOKEN },
        { text: 'two', link: null, media: IMAGE },
        noProgress,
      )
    ).ok,
    true,
  );
  const limited = await social.publish(
    { platform: 'instagram', externalId: ig, accessToken: TOKEN },
    { text: 'three', link: null, media: IMAGE },
    noProgress,
  );
  assert.ok(!limited.ok && limited.permanent && limited.code === '9/2207042', JSON.stringify(limited));
  const quota = await graph('GET', `/${ig}/content_publishing_limit`);
  assert.deepEqual(quota.body.data[0], { quota_usage: 2, config: { quota_total: 2, quota_duration: 86_400 } });

  // A container not published within 24 h of the simulator's clock expires; the adapter drops it.
  const old = await graph('POST', `/${ig}/media`, { image_url: IMAGE.url });
  await control('/clock', { advance_ms: 25 * 3_600_000 });
  const dropped: (string | null)[] = [];
  const r = await social.publish(
    { platform: 'instagram', externalId: ig, accessToken: TOKEN },
    { text: null, link: null, media: IMAGE },
    {
      containerId: old.body.id,
      onContainer: async (id) => void dropped.push(id),
    },
  );
  assert.ok(!r.ok && !r.permanent, JSON.stringify(r));
  assert.deepEqual(dropped, [null]);
  await control('/reset', {});
});

test('faults: a failed container is final with its subcode; a transient 500 and a rate limit are retryable; a caption over 2,200 is 100', async () => {
  const ig = '2000003';
  const to = { platform: 'instagram' as const, externalId: ig, accessToken: TOKEN };
  await control('/faults', { kind: 'container_error', owner: ig, subcode: 2207004 });
  const bad = await social.publish(to, { text: 'x', link: null, media: IMAGE }, noProgress);
  assert.ok(!bad.ok && bad.permanent && bad.code === '-1/2207004', JSON.stringify(bad));
  await control('/faults', { kind: 'transient', owner: ig });
  const t = await social.publish(to, { text: 'x', link: null, media: IMAGE }, noProgress);
  assert.ok(!t.ok && !t.permanent && t.code === '2', JSON.stringify(t));
  await control('/faults', { kind: 'rate_limit', owner: '1000009' });
  const rl = await social.publish(
    { platform: 'facebook', externalId: '1000009', accessToken: TOKEN },
    { text: 'x', link: null, media: null },
    noProgress,
  );
  assert.ok(!rl.ok && !rl.permanent && rl.code === '4', JSON.stringify(rl));
  const fb = await social.publish(
    { platform: 'facebook', externalId: '1000009', accessToken: TOKEN },
    { text: 'x', link: 'https://x.example', media: null },
    noProgress,
  );
  assert.ok(fb.ok && /^1000009_\d+$/.test(fb.value.platformPostId), JSON.stringify(fb));
  const long = await graph('POST', `/${ig}/media`, { image_url: IMAGE.url, caption: 'x'.repeat(2201) });
  assert.deepEqual([long.status, long.body.error.code], [400, 100]);
  const noperm = await social.publish(
    { platform: 'facebook', externalId: '1000009', accessToken: 'noperm-token' },
    { text: 'x', link: null, media: null },
    noProgress,
  );
  assert.ok(!noperm.ok && noperm.permanent && noperm.code === '200', JSON.stringify(noperm));
});
