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
  type Prices,
} from './progress.js';
