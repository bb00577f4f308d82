// The flows family as the doors, the worker and the ingress see it.
export {
  loadFlow,
  listFlows,
  getFlow,
  publishFlow,
  exportFlow,
  listSessions,
  getSession,
  listSessionSteps,
  startSession,
  endSession,
  openSession,
  recordStep,
  closeSession,
  type OpenResult,
  type OpenSessionInput,
  type FlowServiceDeps,
} from './flows.js';
export { receiveFlowReply } from './replies.js';
export * from './schemas.js';
