// The agents family as its activities and the doors see it.
export {
  beginRun,
  endRun,
  waitForDecision,
  recordModelTurn,
  recordUncalledTool,
  recordedStep,
  beginToolStep,
  finishToolStep,
  runCredential,
  type Prices,
} from './progress.js';
// The worker's relay starts runs whose workflow start was lost.
export { startRunsLeftBehind } from './runs.js';
