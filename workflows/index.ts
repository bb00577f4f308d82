export { messageWorkflow } from './message.js';
