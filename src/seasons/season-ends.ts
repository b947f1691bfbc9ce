// Ending a server's season: by hand (the write API, the CLI, the library), or when the schedule
// says it is due (a write script found it so, or the calendar ticker did). One script ends it
// (end-season-9.lua), a compare-and-set on the current season at the settings' epoch, so it ends
// exactly once across every instance and writer; the seasons past `season_retention` are then
// dropped, one call each (drop-season-3.lua).
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import type { RedisClock } from '../redis/clock.js'
import * as scripts from '../redis/write-scripts.js'
import { OUTSIDE_PERIOD_WINDOW, SeasonEndStatus, SETTINGS_CHANGED } from '../redis/script-status.js'
import { seasonSpan } from '../calendar/server-calendar.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'
import type { GuildWriteSettings, SettingsCache } from '../settings/settings-store.js'
import { defaultSeasonName, seasonEndsAt } from './season-state.js'

/** A season as the API and the library show it. */
export interface Season {
  id: number
  name: string
  startedAt: Date | null
  /** null for the current season. */
  endedAt: Date | null
}

/** Tries of one end: another end, a settings change or a clock correction may each come between. */
const TRIES = 5

export class SeasonEnds {
  readonly #redis: RedisClient
  readonly #keys: KeyBuilder
  readonly #settings: SettingsCache
  readonly #clock: RedisClock

  constructor (redis: RedisClient, keys: KeyBuilder, settings: SettingsCache, clock: RedisClock) {
    this.#redis = redis
    this.#keys = keys
    this.#settings = settings
    this.#clock = clock
  }

  /**
   * Ends season `id` now, whatever the schedule, and starts the next (named `name`, or "Season
   * N"); returns the new current season. A season `id` already ended (by another call, or by this
   * one before its answer was lost) is not ended again: the current season is the answer.
   */
  async endNow (guildId: string, id: number, name?: string): Promise<Season> {
    let settings = await this.#settings.get(guildId)
    for (let tries = 1; ; tries++) {
      if (settings.currentSeason.id > id) return await this.current(guildId)
      const [status, next = 0, startedAt = 0] = await this.#end(guildId, settings, 'now', { name: name ?? '' })
      if (status === SeasonEndStatus.ended) {
        await this.dropPastRetention(guildId)
        return { id: next, name: name ?? defaultSeasonName(next), startedAt: new Date(startedAt), endedAt: null }
      }
      if (tries === TRIES) throw new Error(`the season of server ${guildId} changed ${tries} times while it was ended`)
      settings = await this.#settings.refresh(guildId, settings)
    }
  }

  /** The current season. */
  async current (guildId: string): Promise<Season> {
    const k = this.#keys.guild(guildId)
    const [id, startedAt, since] = await this.#redis.multi().hget(k.seasons, 'current').hget(k.seasons, 'current_started_at').hget(k.hist, 'since').exec() ?? []
    const current = Number(id?.[1] ?? 1)
    const name = await this.#redis.hget(k.seasons, `name:${current}`)
    const start = startedAt?.[1] ?? since?.[1] ?? null
    return { id: current, name: name ?? defaultSeasonName(current), startedAt: start === null ? null : new Date(Number(start)), endedAt: null }
  }

  /**
   * Ends the current season if its scheduled end has come by Redis's clock (`nowMs`: Redis's time
   * as last seen, the caller's estimate by default). Returns whether this call ended it: false
   * when it is not due, or another caller ended it first.
   */
  async endIfDue (guildId: string, given?: GuildWriteSettings, nowMs?: number): Promise<boolean> {
    let settings = given ?? await this.#settings.get(guildId)
    let now = nowMs ?? this.#clock.now()
    for (let tries = 1; ; tries++) {
      const dueAt = seasonEndsAt(settings, settings.currentSeason)
      if (dueAt === null || now < dueAt) return false
      // The next season starts where the schedule's span holding now does (the end itself, when on time).
      const span = seasonSpan(settings.season.every, Math.max(now, dueAt), settings.season.timezone)
      if (span === null) return false
      const [status, value = 0] = await this.#end(guildId, settings, 'due', { dueAt, nextStart: span.start, from: span.start, until: span.end })
      if (status === SeasonEndStatus.ended) {
        await this.dropPastRetention(guildId)
        return true
      }
      if (tries === TRIES) throw new Error(`the season of server ${guildId} changed ${tries} times while it was ended`)
      if (status === SETTINGS_CHANGED) {
        const fresh = await this.#settings.refresh(guildId, settings)
        if (fresh.currentSeason.id !== settings.currentSeason.id) return false // ended by another
        settings = fresh
      } else {
        // OUTSIDE_PERIOD_WINDOW or not due: Redis's clock is not where this process thought.
        this.#clock.observe(value)
        now = value
        if (status !== OUTSIDE_PERIOD_WINDOW) return false
      }
    }
  }

  /** Drops the ended seasons past `season_retention`, oldest first. Returns how many. */
  async dropPastRetention (guildId: string): Promise<number> {
    const k = this.#keys.guild(guildId)
    let dropped = 0
    for (;;) {
      const oldest = Number(await this.#redis.hget(k.seasons, 'oldest') ?? 1)
      const done = await scripts.dropSeason(this.#redis, {
        ...k, board: this.#keys.season(guildId, oldest), seasonId: oldest, defaultRetention: SETTINGS_LIMITS.seasonRetention.default
      })
      if (done !== 1) return dropped
      dropped++
    }
  }

  async #end (guildId: string, settings: GuildWriteSettings, mode: 'due' | 'now',
    args: { dueAt?: number, nextStart?: number, from?: number, until?: number, name?: string }): Promise<[number, number, number?, number?]> {
    const k = this.#keys.guild(guildId)
    const { id } = settings.currentSeason
    return await scripts.endSeason(this.#redis, {
      ...k,
      seasonEnded: this.#keys.season(guildId, id),
      mode,
      seasonId: id,
      epoch: settings.epoch,
      dueAt: args.dueAt ?? '',
      nextStart: args.nextStart ?? '',
      from: args.from ?? '',
      until: args.until ?? '',
      name: args.name ?? ''
    })
  }
}
