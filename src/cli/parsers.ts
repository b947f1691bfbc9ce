// Option parsers for commander: bad input is refused while parsing, before Redis is touched,
// with the library's own wording for its rules.
import { InvalidArgumentError } from 'commander'
import { LeaderboardError } from '../errors.js'
import { assertServerScope } from '../api-keys/server-scope.js'
import { assertInteger, assertSnowflake, assertUsername, parseMultiplier } from '../validation.js'

function asArgumentError<T> (check: () => T): T {
  try {
    return check()
  } catch (err) {
    if (err instanceof LeaderboardError) throw new InvalidArgumentError(err.message)
    throw err
  }
}

export const guildId = (value: string): string => asArgumentError(() => assertSnowflake('guild_id', value))
/** A comma-separated list of server ids (up to 1,000). */
export const guildIds = (value: string): string[] => asArgumentError(() =>
  assertServerScope(value.split(',').map((id) => id.trim())) as string[])
export const userId = (value: string): string => asArgumentError(() => assertSnowflake('user_id', value))
export const username = (value: string): string => asArgumentError(() => assertUsername(value))
/** A comma-separated list of role ids. */
export const roleIds = (value: string): string[] => asArgumentError(() => value.split(',').map((id, i) => assertSnowflake(`role id ${i + 1}`, id.trim())))
export const channelId = (value: string): string => asArgumentError(() => assertSnowflake('channel_id', value))

/** `N` or a range `MIN-MAX` for the writer to draw from, each from 1 to `max`. */
export function awardXp (max: number): (value: string) => number | { min: number, max: number } {
  const whole = integer('xp', 1, max)
  return (value) => {
    const range = /^\s*(\d+)\s*-\s*(\d+)\s*$/.exec(value)
    if (range === null) return whole(value)
    const min = integer('xp (the range\'s low end)', 1, max)(range[1] ?? '')
    return { min, max: integer('xp (the range\'s high end)', min, max)(range[2] ?? '') }
  }
}

/** A parser for a whole number in [min, max], written in plain digits. */
export function integer (name: string, min: number, max: number): (value: string) => number {
  return (value) => asArgumentError(() => {
    const n = /^-?\d+$/.test(value.trim()) ? Number(value) : NaN
    return assertInteger(name, n, min, max)
  })
}

/** Checked here, but passed on as typed, so "0.29" reaches the writer as text and stays exact. */
export const multiplier = (value: string): string => asArgumentError(() => {
  parseMultiplier(value)
  return value.trim()
})

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?)?$/i

/**
 * An ISO 8601 date or date-time such as 2026-11-21T18:04:05Z. Without an offset it is read as
 * UTC, not local time: daily claims count UTC days, and the machine's zone should not matter.
 */
export function isoDate (value: string): Date {
  const text = value.trim().toUpperCase()
  const match = ISO_DATE.exec(text)
  const date = new Date(match !== null && text.includes('T') && match[1] === undefined ? `${text}Z` : text)
  if (match === null || Number.isNaN(date.getTime()) || !realDay(text.slice(0, 10))) {
    throw new InvalidArgumentError('expected an ISO 8601 date-time such as 2026-11-21T18:04:05Z')
  }
  return date
}

/** Date.parse rolls 2026-02-30 over to March; a typo should be refused instead. */
function realDay (ymd: string): boolean {
  const [y = 0, m = 0, d = 0] = ymd.split('-').map(Number)
  const day = new Date(Date.UTC(y, m - 1, d))
  return day.getUTCFullYear() === y && day.getUTCMonth() === m - 1 && day.getUTCDate() === d
}
