// JSON Schema validation is shared with the services (operation inputs); the edge uses the same functions.
export { validateBody, validateQuery, toFieldErrors, unstorableTextAt, type JsonSchema } from '../../services/platform/validation.js';
