// Days, weeks, months and quarters in an IANA time zone, as Unix ms, with the runtime's own time
// zone data (Intl): a day starts at its first instant whose local date is that day (00:00, or
// later where a daylight-saving change skips midnight).

const DAY_MS = 86_400_000
/** No time zone is further than this from UTC: a local day starts within it of its UTC midnight. */
const MAX_OFFSET_MS = 15 * 3600 * 1000

const formatters = new Map<string, Intl.DateTimeFormat>()

function formatter (timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: 'numeric', day: 'numeric', hourCycle: 'h23' })
    formatters.set(timeZone, f)
  }
  return f
}

/** A local calendar date. */
export interface LocalDate {
  year: number
  /** 1 to 12. */
  month: number
  day: number
}

/** The local date of an instant in `timeZone`. */
export function localDate (ms: number, timeZone: string): LocalDate {
  const parts = formatter(timeZone).formatToParts(ms)
  const part = (type: string): number => Number(parts.find((p) => p.type === type)?.value)
  return { year: part('year'), month: part('month'), day: part('day') }
}

/** Days since 1970-01-01 of a local date (a plain calendar count, no time zone). */
function dayNumber (date: LocalDate): number {
  return Math.floor(Date.UTC(date.year, date.month - 1, date.day) / DAY_MS)
}

function dateOfNumber (n: number): LocalDate {
  const d = new Date(n * DAY_MS)
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() }
}

/** The first instant whose local date in `timeZone` is `date` or later. */
export function startOfLocalDate (date: LocalDate, timeZone: string): number {
  const target = dayNumber(date)
  const utcMidnight = target * DAY_MS
  let lo = utcMidnight - MAX_OFFSET_MS // local date before the target
  let hi = utcMidnight + MAX_OFFSET_MS // local date at or after it
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2 / 1000) * 1000
    if (mid <= lo || mid >= hi) break
    if (dayNumber(localDate(mid, timeZone)) >= target) hi = mid
    else lo = mid
  }
  return hi
}

/** `YYYY-MM-DD`. */
export function dateLabel (date: LocalDate): string {
  return `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`
}

/** A span of local time: its label and [start, end) in Unix ms. */
export interface ZonedSpan {
  label: string
  start: number
  end: number
}

/** The local day holding `ms`. */
export function zonedDay (ms: number, timeZone: string): ZonedSpan {
  const date = localDate(ms, timeZone)
  const n = dayNumber(date)
  return { label: dateLabel(date), start: startOfLocalDate(date, timeZone), end: startOfLocalDate(dateOfNumber(n + 1), timeZone) }
}

/** The local day `days` days after the one labelled `label` (negative: before). */
export function shiftDay (label: string, days: number): string {
  const [year = 0, month = 1, day = 1] = label.split('-').map(Number)
  return dateLabel(dateOfNumber(dayNumber({ year, month, day }) + days))
}

/** The local week (Monday 00:00 to Monday 00:00) holding `ms`, labelled by its Monday's date. */
export function zonedWeek (ms: number, timeZone: string): ZonedSpan {
  const n = dayNumber(localDate(ms, timeZone))
  const monday = n - ((n + 3) % 7 + 7) % 7 // 1970-01-01 was a Thursday
  return { label: dateLabel(dateOfNumber(monday)), start: startOfLocalDate(dateOfNumber(monday), timeZone), end: startOfLocalDate(dateOfNumber(monday + 7), timeZone) }
}

/** The local calendar month holding `ms`, or its quarter (January, April, July, October) with `months` 3. */
export function zonedMonths (ms: number, timeZone: string, months: 1 | 3): ZonedSpan {
  const { year, month } = localDate(ms, timeZone)
  const first = month - ((month - 1) % months)
  const next = first + months
  const start = { year, month: first, day: 1 }
  const end = next > 12 ? { year: year + 1, month: next - 12, day: 1 } : { year, month: next, day: 1 }
  return { label: dateLabel(start), start: startOfLocalDate(start, timeZone), end: startOfLocalDate(end, timeZone) }
}
