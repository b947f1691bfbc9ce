// What a write to one server counts into at a given time, from its settings: the UTC week and
// month (the period boards), the server's day in its time zone (history, the daily cap), the
// season schedule's current span, the boosts active; and one window [from, until) in which all of
// these hold. A write script checks Redis's clock against the window (includes/periods.lua) and
// hands back its time when it is outside, so Redis's clock decides every boundary, as for the
// period boards (src/periods/current-periods.ts).
import { type PeriodWindow, periodWindow } from '../periods/periods.js'
import type { Boost, GuildSettings, SeasonSchedule } from '../settings/settings.js'
import { zonedDay, zonedMonths, type ZonedSpan, zonedWeek } from './zoned.js'

export interface ServerCalendar extends PeriodWindow {
  /** The server's day (its time zone) holding the time. */
  day: ZonedSpan
  /** The scheduled season span holding the time; null when seasons end only by hand. */
  season: ZonedSpan | null
  /** Boosts active throughout the window. */
  boosts: Boost[]
}

/**
 * How long a day's board (the awards' gains of one of the server's days) is kept past the day's
 * end: while the day's history is closed from it (issue 28), late by a week at most.
 */
export const DAY_BOARD_KEEP_MS = 8 * 86_400_000

/** When the board of `day` may go (PEXPIREAT). */
export function dayBoardKeepUntil (day: ZonedSpan): number {
  return day.end + DAY_BOARD_KEEP_MS
}

/** The season schedule's span holding `ms` in `timeZone`, or null for `none`. */
export function seasonSpan (every: SeasonSchedule, ms: number, timeZone: string): ZonedSpan | null {
  switch (every) {
    case 'none': return null
    case 'week': return zonedWeek(ms, timeZone)
    case 'month': return zonedMonths(ms, timeZone, 1)
    case 'quarter': return zonedMonths(ms, timeZone, 3)
  }
}

export function serverCalendar (settings: Pick<GuildSettings, 'season' | 'boosts'>, ms: number): ServerCalendar {
  const periods = periodWindow(ms)
  const timeZone = settings.season.timezone
  const day = zonedDay(ms, timeZone)
  const season = seasonSpan(settings.season.every, ms, timeZone)
  let from = Math.max(periods.from, day.start, season?.start ?? 0)
  let until = Math.min(periods.until, day.end, season?.end ?? Infinity)
  const boosts: Boost[] = []
  for (const boost of settings.boosts) {
    // Each boost's start and end that fall around `ms` narrow the window to where it is on or off throughout.
    if (boost.startsAt <= ms && ms < boost.endsAt) {
      boosts.push(boost)
      from = Math.max(from, boost.startsAt)
      until = Math.min(until, boost.endsAt)
    } else if (boost.endsAt <= ms) {
      from = Math.max(from, boost.endsAt)
    } else {
      until = Math.min(until, boost.startsAt)
    }
  }
  return { ...periods, day, season, boosts, from, until }
}
