// The reads of a server's seasons and history: its seasons (the current one and the ended ones
// kept), a member's history over the closed days, and the server's stats over them. Each is one
// script, read consistently with the server's data version (every season's end and day's close
// moves it).
import { LRUCache } from 'lru-cache'
import type { Static } from 'typebox'
import type { RedisClient } from '../redis/client.js'
import { boardMember, type KeyBuilder } from '../redis/keys.js'
import { shiftDay } from '../calendar/zoned.js'
import { parseDayStats } from '../history/day-close.js'
import { defaultSeasonName, SEASON_FIELDS } from '../seasons/season-state.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'
import type { MemberHistory as MemberHistorySchema, StatsHistory as StatsHistorySchema } from '../schemas/history.js'
import type { Season as SeasonSchema, SeasonList as SeasonListSchema } from '../schemas/seasons.js'
import type { Versioned } from './versioned.js'

export type SeasonBody = Static<typeof SeasonSchema>
export type SeasonList = Static<typeof SeasonListSchema>
export type MemberHistory = Static<typeof MemberHistorySchema>
export type StatsHistory = Static<typeof StatsHistorySchema>

const iso = (ms: string | number | null | undefined): string | null => ms === null || ms === undefined ? null : new Date(Number(ms)).toISOString()

/** The history hash's state that names the keys of a member's history read. */
interface HistoryState {
  closedThrough: string
  closedFrom: string
  latestDay: string
}

/** The days from `first` to `last` (YYYY-MM-DD, both included), in order. */
function daysBetween (first: string, last: string): string[] {
  const days: string[] = []
  for (let day = first; day <= last; day = shiftDay(day, 1)) days.push(day)
  return days
}

/** The closed days a read of the last `days` shows, oldest first: within the closed days that follow on from each other. */
function closedWindow (closedThrough: string, closedFrom: string, days: number): string[] {
  if (closedThrough === '') return []
  const first = shiftDay(closedThrough, -(days - 1))
  return daysBetween(closedFrom > first ? closedFrom : first, closedThrough)
}

/** Servers whose history state a reader remembers (a wrong guess costs one more round trip, once). */
const REMEMBERED = 10_000

export class CalendarReads {
  readonly #redis: RedisClient
  readonly #keys: KeyBuilder
  readonly #states = new LRUCache<string, HistoryState>({ max: REMEMBERED })

  constructor (redis: RedisClient, keys: KeyBuilder) {
    this.#redis = redis
    this.#keys = keys
  }

  /** The server's seasons, newest first: the current one, then the ended ones it keeps. */
  async seasons (guildId: string, page: number, limit: number): Promise<Versioned<SeasonList>> {
    const k = this.#keys.guild(guildId)
    const [version, retentionText, since, flat] = await this.#redis.seasonsList(k.seasons, k.settings, k.hist, k.version)
    const hash: Record<string, string> = {}
    for (let i = 0; i < flat.length; i += 2) hash[flat[i] as string] = flat[i + 1] as string
    const current = Number(hash[SEASON_FIELDS.current] ?? 1)
    const retention = Number(retentionText ?? SETTINGS_LIMITS.seasonRetention.default)
    const all: SeasonBody[] = [{
      id: current,
      name: hash[`name:${current}`] ?? defaultSeasonName(current),
      started_at: iso(hash[SEASON_FIELDS.startedAt] ?? since),
      ended_at: null
    }]
    for (let id = current - 1; id >= Math.max(1, current - retention); id--) {
      const record = hash[String(id)]
      if (record === undefined) continue
      const { name, started_at: startedAt, ended_at: endedAt } = JSON.parse(record) as { name: string, started_at?: number, ended_at: number }
      all.push({ id, name, started_at: iso(startedAt), ended_at: iso(endedAt) })
    }
    return { version: version ?? '0', value: { data: all.slice((page - 1) * limit, page * limit), total: all.length, page } }
  }

  /** A member's history over the last `days` closed days, oldest first; null for a user that is not a member. */
  async memberHistory (guildId: string, userId: string, days: number): Promise<Versioned<MemberHistory | null>> {
    const keys = this.#keys
    const k = keys.guild(guildId)
    let state = this.#states.get(guildId) ?? { closedThrough: '', closedFrom: '', latestDay: '' }
    for (let tries = 1; ; tries++) {
      const window = closedWindow(state.closedThrough, state.closedFrom, days)
      const open = window.length === 0 || state.latestDay <= state.closedThrough ? [] : daysBetween(shiftDay(state.closedThrough, 1), state.latestDay)
      const dayKeys = [
        ...window.map((day) => day === state.closedThrough ? k.histRanksLatest : keys.histRanks(guildId, day)),
        ...window.map((day) => keys.histChanges(guildId, day)),
        ...open.map((day) => keys.dayStart(guildId, day))
      ]
      const allKeys = [k.board, k.members, k.version, k.hist, ...dayKeys]
      const [version, status, ...values] = await this.#redis.memberHistory(allKeys.length, ...allKeys,
        boardMember(userId), window.length, open.length, state.closedThrough, state.closedFrom, state.latestDay)
      if (status === 0) return { version: version ?? '0', value: null }
      if (status === 1) {
        const data = window.map((date, i) => {
          const rank = Number(values[3 * i + 2])
          return { date, xp: Number(values[3 * i]), xp_gained: Number(values[3 * i + 1]), rank: rank === 0 ? null : rank }
        })
        return { version: version ?? '0', value: { data } }
      }
      const [closedThrough = '', closedFrom = '', latestDay = ''] = values.map(String)
      state = { closedThrough, closedFrom, latestDay }
      this.#states.set(guildId, state)
      if (tries === 3) throw new Error(`the history of server ${guildId} moved ${tries} times while it was read`)
    }
  }

  /** The server's stats over the last `days` closed days, oldest first. */
  async statsHistory (guildId: string, days: number): Promise<Versioned<StatsHistory>> {
    const k = this.#keys.guild(guildId)
    const [version, closedThrough, closedFrom, flat] = await this.#redis.statsHistory(k.hist, k.histStats, k.version)
    const kept = new Map<string, string>()
    for (let i = 0; i < flat.length; i += 2) kept.set(flat[i] as string, flat[i + 1] as string)
    const data = closedWindow(closedThrough ?? '', closedFrom ?? '', days).flatMap((date) => {
      const text = kept.get(date)
      if (text === undefined) return []
      const stats = parseDayStats(text)
      return [{ date, total_members: stats.totalMembers, total_xp: Number(stats.totalXp), active_members: stats.activeMembers, xp_gained: Number(stats.xpGained) }]
    })
    return { version: version ?? '0', value: { data } }
  }
}
