/**
 * The task queue that carries the batch dispatchers' streaming activities of one channel. Each
 * worker polls it with DISPATCH_RUNS_PER_WORKER slots, so the channel's DISPATCH_RUNS dispatcher
 * runs spread over the workers instead of piling into one process: one worker streams one run at a
 * time (as a single dispatcher did), a second worker streams a second one at once.
 * Derived from the provider queue so a dispatcher run started before this existed finds it without
 * a new input field.
 */
export const dispatchTaskQueueOf = (providerTaskQueue: string) => `${providerTaskQueue}-dispatch`;
