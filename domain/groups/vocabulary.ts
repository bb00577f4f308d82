// The chat-group family's words (Resources > Chat-channel group; States > Chat-channel group;
// Limits > Chat group; Endpoints > Chat-channel groups).

/** creating → active | failed; active → deleting (pending deletion at the provider) → deleted; suspended by the provider. */
export const GROUP_STATUSES = ['creating', 'active', 'suspended', 'deleting', 'deleted', 'failed'] as const;
export type GroupStatus = (typeof GROUP_STATUSES)[number];

export const JOIN_APPROVAL_MODES = ['auto_approve', 'approval_required'] as const;
export type JoinApprovalMode = (typeof JOIN_APPROVAL_MODES)[number];

/** A person's place in a group: invited (an invite link sent, counts toward the limit), joined, left, removed. */
export const PARTICIPANT_STATUSES = ['invited', 'joined', 'left', 'removed'] as const;
export type ParticipantStatus = (typeof PARTICIPANT_STATUSES)[number];

export const JOIN_REQUEST_STATUSES = ['pending', 'approved', 'rejected', 'revoked'] as const;
export type JoinRequestStatus = (typeof JOIN_REQUEST_STATUSES)[number];

export const GROUP_LIMITS = {
  /** Participants including the business (and pending invites, which hold a place). */
  participants: 8,
  initialInvitees: 7,
  invitesPerCall: 7,
  removalsPerCall: 8,
  subject: 128,
  description: 2048,
  messageText: 4096,
  pinDaysMin: 1,
  pinDaysMax: 30,
  /** Free-form group messages only while a participant wrote within this window. */
  windowHours: 24,
  /** How long creation waits for the provider's confirmation webhook before the group is failed. */
  confirmationSeconds: 300,
  pageDefault: 20,
  pageMax: 100,
} as const;

/** The provider's refusal for a number that may not run groups (Errors: 131215 eligibility). */
export const NOT_ELIGIBLE_CODE = 131215;

/** The group events (Events), each emitted through the outbox in the transaction of its change. */
export const GROUP_EVENTS = [
  'group.created',
  'group.failed',
  'group.updated',
  'group.deleted',
  'group.participant_joined',
  'group.participant_left',
  'group.participant_removed',
  'group.join_requested',
] as const;
