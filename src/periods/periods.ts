// Period arithmetic for the period leaderboards: ISO weeks (Monday 00:00 UTC) and UTC calendar
// months, as pure functions of a time in Unix ms. The one implementation: writers and readers
// name a period's key with these, and the scripts only check that Redis's clock falls in the
// window the keys were chosen for (see `PeriodWindow`), so Redis time decides the period.

const DAY_MS = 86_400_000
const WEEK_MS = 7 * DAY_MS
/** Kept past the end of the period that follows it, so no rounding anywhere loses a board early. */
export const PERIOD_KEEP_MARGIN_MS = 3_600_000

export const PERIODS = ['all', 'week', 'month', 'last_week', 'last_month'] as const
export type Period = typeof PERIODS[number]
export type PeriodUnit = 'week' | 'month'

/** One week or month: its key label (`2026-W47`, `2026-11`) and its span [start, end) in Unix ms. */
export interface PeriodSpan {
  unit: PeriodUnit
  label: string
  start: number
  end: number
}

const pad2 = (n: number): string => String(n).padStart(2, '0')

/** The UTC day of a time in Unix ms, as days since the epoch: what a daily streak and a day-dependent ETag turn on. */
export function utcDay (ms: number): number {
  return Math.floor(ms / DAY_MS)
}

/** Monday 00:00 UTC of the ISO week holding `ms`. (1970-01-01 was a Thursday.) */
export function isoWeekStart (ms: number): number {
  const day = Math.floor(ms / DAY_MS)
  return (day - ((day + 3) % 7 + 7) % 7) * DAY_MS
}

/**
 * The ISO week holding `ms`. Its year is the year of its Thursday (ISO 8601), so
 * 2026-12-31 (a Thursday) is in 2026-W53 and 2027-01-01 too, while 2027-01-04 opens 2027-W01.
 */
export function isoWeek (ms: number): PeriodSpan {
  const start = isoWeekStart(ms)
  const thursday = start + 3 * DAY_MS
  const year = new Date(thursday).getUTCFullYear()
  const week = Math.floor((thursday - Date.UTC(year, 0, 1)) / WEEK_MS) + 1
  return { unit: 'week', label: `${year}-W${pad2(week)}`, start, end: start + WEEK_MS }
}

/** The UTC calendar month holding `ms`. */
export function utcMonth (ms: number): PeriodSpan {
  const date = new Date(ms)
  const year = date.getUTCFullYear()
  const month = date.getUTCMonth()
  return { unit: 'month', label: `${year}-${pad2(month + 1)}`, start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1) }
}

/** The week or month holding `ms`. */
export function spanOf (unit: PeriodUnit, ms: number): PeriodSpan {
  return unit === 'week' ? isoWeek(ms) : utcMonth(ms)
}

/** The span that follows `span`. */
export function nextSpan (span: PeriodSpan): PeriodSpan {
  return spanOf(span.unit, span.end)
}

/** The span before `span`. */
export function previousSpan (span: PeriodSpan): PeriodSpan {
  return spanOf(span.unit, span.start - 1)
}

/**
 * When a period's board may go: at the end of the period after it (while it is "last week" or
 * "last month" it is still read), plus a margin. Unix ms, for PEXPIREAT.
 */
export function keepUntil (span: PeriodSpan): number {
  return nextSpan(span).end + PERIOD_KEEP_MARGIN_MS
}

/**
 * The period spans a time falls in, and the window [from, until) of times at which they are
 * the current ones: a script given keys for these spans checks that Redis's clock is in the
 * window, and otherwise hands back its time so the caller can choose again.
 */
export interface PeriodWindow {
  week: PeriodSpan
  month: PeriodSpan
  lastWeek: PeriodSpan
  lastMonth: PeriodSpan
  from: number
  until: number
}

export function periodWindow (ms: number): PeriodWindow {
  const week = isoWeek(ms)
  const month = utcMonth(ms)
  return {
    week,
    month,
    lastWeek: previousSpan(week),
    lastMonth: previousSpan(month),
    from: Math.max(week.start, month.start),
    until: Math.min(week.end, month.end)
  }
}

/** The span a period name reads at `ms` (never `all`, which has none). */
export function spanOfPeriod (period: Exclude<Period, 'all'>, ms: number): PeriodSpan {
  const w = periodWindow(ms)
  switch (period) {
    case 'week': return w.week
    case 'month': return w.month
    case 'last_week': return w.lastWeek
    case 'last_month': return w.lastMonth
  }
}
