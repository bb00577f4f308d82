// Records the scheduled post workflow's histories for the replay test:
//   npx tsx scripts/record-posts.ts
// A stack of its own; posts written, scheduled and published through the API, the simulator's
// Facebook Page and Instagram account behind them: a post scheduled, rescheduled and then published
// now to both (published), a scheduled post cancelled (cancelled), a post refused by the platform
// (an expired token: failed), and a transient refusal retried after the workflow's one-minute timer
// (retried; takes a minute). test/replay/histories/scheduledPostWorkflow/<scenario>.json.
// Re-record after a change to workflows/posts/scheduled-post.ts.
import { scheduledPostWorkflowId } from '../workflows/posts/scheduled-post.starter.js';
import { withRecorder } from './recorder.js';

const TYPE = 'scheduledPostWorkflow';
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();
const IMAGE = { type: 'image', url: 'https://cdn.example.com/p/shoes.jpg' };

await withRecorder('svc-record-posts', {}, 'Posts recorder', async ({ client, account, api, sim, save }) => {
  const ok = (r: any, what: string) => {
    if (r.status !== 'success') throw new Error(`${what}: ${JSON.stringify(r)}`);
    return r.data;
  };
  const connect = async (platform: string, id: string, token: string) =>
    ok(await api('PUT', `/api/v3/posts/connections/${platform}`, { external_id: id, access_token: token }), `connect ${platform}`);
  const handle = (uid: string) => client.workflow.getHandle(scheduledPostWorkflowId(account.id, uid));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  await connect('facebook', '900100200300', 'EAAG-recorder-page-token');
  await connect('instagram', '900100200400', 'EAAG-recorder-ig-token');

  const post = ok(
    await api('POST', '/api/v3/posts', {
      text: 'Recorded #post',
      media: [IMAGE],
      platforms: ['facebook', 'instagram'],
      scheduled_at: inMs(3_600_000),
    }),
    'create',
  );
  await sleep(300);
  ok(await api('POST', `/api/v3/posts/${post.uid}/schedule`, { scheduled_at: inMs(7_200_000) }), 'reschedule');
  await sleep(300);
  ok(await api('POST', `/api/v3/posts/${post.uid}/publish`, {}), 'publish now');
  await save(TYPE, 'published', handle(post.uid));

  const cancelled = ok(
    await api('POST', '/api/v3/posts', { text: 'Cancelled', platforms: ['facebook'], scheduled_at: inMs(3_600_000) }),
    'create',
  );
  await sleep(300);
  ok(await api('POST', `/api/v3/posts/${cancelled.uid}/cancel`, {}), 'cancel');
  await save(TYPE, 'cancelled', handle(cancelled.uid));

  await connect('facebook', '900100200301', 'expired-recorder-token');
  const failed = ok(await api('POST', '/api/v3/posts', { text: 'Refused', platforms: ['facebook'] }), 'create');
  ok(await api('POST', `/api/v3/posts/${failed.uid}/publish`, {}), 'publish now');
  await save(TYPE, 'failed', handle(failed.uid));

  await connect('facebook', '900100200302', 'EAAG-recorder-page-token');
  await sim('POST', '/_sim/social/faults', { kind: 'transient', owner: '900100200302', count: 1 });
  const retried = ok(await api('POST', '/api/v3/posts', { text: 'Retried', platforms: ['facebook'] }), 'create');
  ok(await api('POST', `/api/v3/posts/${retried.uid}/publish`, {}), 'publish now');
  await save(TYPE, 'retried', handle(retried.uid));
});
