// The status codes the write scripts reply with (each script's header lists its own). These
// names are the one place TypeScript spells the numbers; the scripts name them as locals too.

/**
 * award-xp: the first element of the reply; award-batch: each award's. In a batch, an award whose
 * own operation id was applied by an earlier call gives that call's reply with its status
 * replayed (the award was applied then, or refused then).
 */
export const AwardStatus = { awarded: 1, overXpLimit: -1, replayedAwarded: 2, replayedOverXpLimit: -3 } as const

/** daily-claim: the first element of the reply. */
export const DailyClaimStatus = { claimed: 1, alreadyClaimed: -1, beforeLastClaim: -2, inFuture: -3 } as const

/**
 * Scripts that write period boards (award-xp, remove-member): Redis's clock is outside the
 * window the caller named the period keys for; nothing changed, and the reply's second element
 * is Redis's time (see includes/periods.lua).
 */
export const OUTSIDE_PERIOD_WINDOW = -2

/** remove-member (the first element of its reply) and set-username (the whole reply). */
export const MemberWriteStatus = { done: 1, notMember: 0 } as const

/** webhook-create. */
export const WebhookCreateStatus = { created: 1, tooMany: -1 } as const

/** webhook-ping: the first element of the reply. */
export const WebhookPingStatus = { queued: 1, notFound: 0, disabled: -1 } as const

/** webhook-record. */
export const WebhookRecordStatus = { recorded: 1, leaseLost: 0, gone: -1, moved: -2 } as const
