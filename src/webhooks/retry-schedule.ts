// When a failed delivery is tried again: exponential backoff per webhook (the delay doubles with
// each failure in a row, from `firstMs` up to `maxMs`, less up to a fifth at random so that the
// receivers of many servers coming back are not hit at once), until 24 h after the event was
// made; then the event is given up and the next one is tried. A receiver that answers ends the
// run of failures.

export interface RetrySchedule {
  /** The delay after the first failure. */
  firstMs: number
  /** The longest delay. */
  maxMs: number
  /** How long after its creation an event is still tried. */
  forMs: number
}

export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { firstMs: 5000, maxMs: 3_600_000, forMs: 24 * 3_600_000 }

/** The delay before the next attempt after `failures` (1 or more) failures in a row; `random` in [0, 1). */
export function retryDelayMs (schedule: RetrySchedule, failures: number, random: number = Math.random()): number {
  const full = Math.min(schedule.maxMs, schedule.firstMs * 2 ** Math.min(Math.max(0, failures - 1), 52))
  return Math.round(full * (1 - random / 5))
}

/** Whether an event made at `createdAtMs` is past its time at `nowMs`. */
export function givenUp (schedule: RetrySchedule, createdAtMs: number, nowMs: number): boolean {
  return nowMs >= createdAtMs + schedule.forMs
}
