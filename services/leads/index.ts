// The leads family as the doors see it.
export {
  upsertLead,
  listLeads,
  getLead,
  listLeadActivities,
  updateLead,
  changeLeadStage,
  assignLead,
  addLeadLabels,
  removeLeadLabel,
  addLeadNote,
  deleteLead,
  mergeLeads,
  getLeadSettings,
  updateLeadSettings,
  setLeadModule,
  readLeadModule,
  type LeadView,
} from './leads.js';
export { leadPhone, type LeadPhone } from './phones.js';
export * from './schemas.js';
