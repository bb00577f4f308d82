// The request context is a service-layer type; the API builds it for each authenticated request.
export type { AccountRow, Admission, AdmissionRow, KeyRow, UserRow, RequestContext } from '../../services/platform/context.js';
