// Scripts that touch period boards are given the boards current by the caller's estimate of
// Redis's clock, with the window in which they are current (periods.ts). A script that finds
// Redis's clock outside it changes nothing and reports the time; the caller learns the clock
// from that and runs it again. This happens at a period's turn, or when a process's own clock
// is off, once: the estimate is right from then on.
import type { RedisClock } from '../redis/clock.js'
import { type PeriodWindow, periodWindow } from './periods.js'

/** What a script attempt gave: its result, or Redis's time when the window was not current. */
export type PeriodAttempt<T> = { done: T } | { outsideAt: number }

const TRIES = 3

export async function inCurrentPeriods<T> (clock: RedisClock, attempt: (periods: PeriodWindow) => Promise<PeriodAttempt<T>>): Promise<T> {
  for (let tries = 1; ; tries++) {
    const result = await attempt(periodWindow(clock.now()))
    if ('done' in result) return result.done
    clock.observe(result.outsideAt)
    if (tries === TRIES) throw new Error(`the current period moved ${tries} times in a row: is Redis's clock jumping?`)
  }
}
