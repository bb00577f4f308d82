// Lead stages (Endpoints > Leads: new, contacted, qualified, opportunity, won, lost, unqualified) and
// the rules of a move between them (docs/leads.md, "Stages"). Moves are free, as a HubSpot lead
// status is, with two guards the contract's reason codes name:
// - reason_required: closing a lead as lost or unqualified says why (the reason is kept on the lead
//   and in its timeline);
// - won_locked: a won lead is a customer; moving it anywhere else reopens a closed deal, so that
//   move also says why, or it is refused.

export const LEAD_STAGES = ['new', 'contacted', 'qualified', 'opportunity', 'won', 'lost', 'unqualified'] as const;
export type LeadStage = (typeof LEAD_STAGES)[number];

/** Stages that close a lead (its closed_at is set on the way in and cleared on the way out). */
export const CLOSED_STAGES: readonly LeadStage[] = ['won', 'lost', 'unqualified'];
/** Stages a lead enters only with a reason. */
export const REASON_STAGES: readonly LeadStage[] = ['lost', 'unqualified'];

export const isLeadStage = (s: unknown): s is LeadStage => typeof s === 'string' && (LEAD_STAGES as readonly string[]).includes(s);

export type StageRefusal = { reason: 'reason_required' | 'won_locked'; message: string };

/**
 * Whether a lead at `from` may move to `to` with the reason given (trimmed; empty is none). Null
 * when it may; staying at the same stage is always allowed (and changes nothing).
 */
export function stageMoveRefusal(from: LeadStage, to: LeadStage, reason: string | null | undefined): StageRefusal | null {
  if (from === to) return null;
  const said = typeof reason === 'string' && reason.trim() !== '';
  if (from === 'won' && !said)
    return {
      reason: 'won_locked',
      message: 'This lead is won: moving it to another stage reopens it, so give the reason for the move.',
    };
  if (REASON_STAGES.includes(to) && !said) return { reason: 'reason_required', message: `Moving a lead to ${to} needs a reason.` };
  return null;
}
