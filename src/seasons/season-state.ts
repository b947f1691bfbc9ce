// A server's current season as its seasons hash holds it (keys.ts, `seasons`), and when it is due
// to end by the server's schedule. Writers cache it with the settings (one epoch moves with
// both: a season's end moves the settings' epoch), so a write script given the epoch knows the
// season the caller computed with is still the current one.
import { seasonSpan } from '../calendar/server-calendar.js'
import type { GuildSettings } from '../settings/settings.js'

/** The fields of the seasons hash. */
export const SEASON_FIELDS = {
  current: 'current',
  startedAt: 'current_started_at',
  anchor: 'anchor',
  oldest: 'oldest'
} as const

/** The seasons hash's fields `CurrentSeason` is read from, in the order `parseCurrentSeason` takes them. */
export const CURRENT_SEASON_FIELDS = [SEASON_FIELDS.current, SEASON_FIELDS.startedAt, SEASON_FIELDS.anchor, SEASON_FIELDS.oldest] as const

export interface CurrentSeason {
  id: number
  /** Unix ms; null for a first season that began before any was recorded. */
  startedAt: number | null
  /** When the schedule (`season.every`, the time zone) last changed, Unix ms: it counts from then. */
  anchor: number | null
  /** The oldest season whose board may still be kept. */
  oldest: number
}

function positive (text: string | null | undefined): number | null {
  const n = text === null || text === undefined ? NaN : Number(text)
  return Number.isSafeInteger(n) && n >= 0 ? n : null
}

/** HMGET of CURRENT_SEASON_FIELDS, as the current season. */
export function parseCurrentSeason (values: ReadonlyArray<string | null>): CurrentSeason {
  const [current, startedAt, anchor, oldest] = values
  return { id: positive(current) ?? 1, startedAt: positive(startedAt), anchor: positive(anchor), oldest: positive(oldest) ?? 1 }
}

/**
 * When the current season ends by the schedule (Unix ms): the end of the schedule's span that
 * holds its start, or the schedule's last change if later. Null when seasons end only by hand.
 */
export function seasonEndsAt (settings: Pick<GuildSettings, 'season'>, season: CurrentSeason): number | null {
  const from = Math.max(season.startedAt ?? -1, season.anchor ?? -1)
  if (from < 0) return null
  return seasonSpan(settings.season.every, from, settings.season.timezone)?.end ?? null
}

/** A season's name when it was given none. */
export function defaultSeasonName (id: number): string {
  return `Season ${id}`
}
