// The templates family as the doors, the worker and other families see it.
export {
  createTemplate,
  listTemplates,
  getTemplate,
  refreshTemplate,
  syncTemplates,
  deployTemplate,
  deleteTemplate,
  checkTemplateSend,
  templateCreateBody,
  templateListQuery,
  templateSyncBody,
  templateDeploymentBody,
  templateSyncSchema,
  type TemplateServiceDeps,
} from './templates.js';
export { templateSchema, templateView } from './view.js';
export { applyTemplateStatus, type StatusSource } from './status.js';
export { receiveTemplateWebhook } from './webhooks.js';
export { insertTemplate, templateOfAccount, templateByKey, updateTemplate, deleteTemplateRow, type TemplateRow } from './store.js';
