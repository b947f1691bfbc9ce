// The status codes the write scripts reply with (each script's header lists its own). These
// names are the one place TypeScript spells the numbers; the scripts name them as locals too.

/**
 * award-xp and award-batch: the first element of an award's reply. Applied whole, or in part up
 * to the daily cap; or not applied (nothing changed) and why. (A batch marks an award whose own
 * operation id was applied by an earlier call with a value of its own; calls remembered before
 * that marked it in the status: replayedAwarded, replayedOverXpLimit.)
 */
export const AwardStatus = { awarded: 1, capped: 3, overXpLimit: -1, cooldown: -4, dailyCap: -5, replayedAwarded: 2, replayedOverXpLimit: -3 } as const

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

/**
 * Scripts that apply what their caller computed from a server's settings (award-xp,
 * award-batch): the settings' epoch moved since; nothing changed, and the reply's second element
 * is the stored epoch (see includes/rules.lua). The caller reads the settings again.
 */
export const SETTINGS_CHANGED = -8
