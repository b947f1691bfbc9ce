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

/** webhook-create. */
export const WebhookCreateStatus = { created: 1, tooMany: -1 } as const

/** webhook-ping: the first element of the reply. */
export const WebhookPingStatus = { queued: 1, notFound: 0, disabled: -1 } as const

/** webhook-record. */
export const WebhookRecordStatus = { recorded: 1, leaseLost: 0, gone: -1, moved: -2 } as const
/**
 * The refusals of the scripts that count by the server's calendar (includes/calendar-counting.lua),
 * each { code, value } with nothing changed: besides OUTSIDE_PERIOD_WINDOW (value: Redis's time),
 * the settings' epoch moved (value: the epoch; the settings changed or a season ended), or the
 * current season is due to end (value: Redis's time). daily-claim puts them behind a 0
 * ({ 0, code, value }): its own refusals have these codes.
 */
export const SETTINGS_CHANGED = -3
export const SEASON_DUE = -4
export const CALENDAR_REFUSAL = 0

/** end-season: the first element of the reply (or SETTINGS_CHANGED, OUTSIDE_PERIOD_WINDOW). */
export const SeasonEndStatus = { ended: 1, notDue: -5 } as const

/** A day's close (close-day-*.lua): the first element of each step's reply. */
export const CloseDayStatus = { done: 1, alreadyClosed: 0, leaseLost: -6, dayBegan: -2 } as const
