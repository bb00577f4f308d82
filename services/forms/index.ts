// The forms family as other layers see it: the operations' services, the session steps its
// workflow's activities run, and the chat ingress's reply hook.
export * from './schemas.js';
export {
  createForm,
  listForms,
  getForm,
  updateForm,
  publishForm,
  getFormVersion,
  sendForm,
  listFormSessions,
  getFormSession,
  cancelFormSession,
  formAnswerSummary,
  readFormModule,
  setFormModule,
  type FormServiceDeps,
} from './forms.js';
export { sendFormPrompt, takeFormReply, expireFormSession, receiveFormReply, type SessionStepDeps } from './sessions.js';
