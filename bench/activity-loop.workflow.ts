import { proxyActivities } from '@temporalio/workflow';

// The floor of bench/agents.ts: a workflow that runs `steps` no-op activities one after the other,
// the bare activity round trip the agent loop's steps are compared with. Bundled and run by a
// worker in the bench process (not the application's worker, whose bundle it is not part of).

const act = proxyActivities<{ noop(i: number): Promise<number> }>({ startToCloseTimeout: '30 seconds' });

export async function benchActivityLoop(steps: number): Promise<number> {
  let n = 0;
  for (let i = 0; i < steps; i++) n += await act.noop(i);
  return n;
}
