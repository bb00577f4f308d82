import { condition, defineSignal, setHandler } from '@temporalio/workflow';

// The engine's floor for bench/payments-callbacks.ts: a workflow that does nothing but count the
// signals it is sent, and ends when it has had `expected` of them. Bundled and run by a worker in
// the bench process (not the application's worker, whose bundle it is not part of).

export const sinkSignal = defineSignal<[number]>('sink');

export async function benchSignalSink(expected: number): Promise<number> {
  let n = 0;
  setHandler(sinkSignal, () => {
    n++;
  });
  await condition(() => n >= expected);
  return n;
}
