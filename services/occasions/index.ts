// The occasions family as the doors and the worker see it.
export {
  listOccasions,
  getOccasion,
  saveOccasion,
  resetOccasion,
  sendOccasionNow,
  runScheduledOccasion,
  getOccasionDefaults,
  updateOccasionDefaults,
  occasionBusinessKey,
  type OccasionRunResult,
  type OccasionDeps,
} from './occasions.js';
export { occasionSpec, syncOccasionSchedule, HOLIDAY_YEARS_AHEAD } from './schedules.js';
export * from './schemas.js';
