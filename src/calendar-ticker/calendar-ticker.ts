// The calendar ticker of a server process: it ends the seasons whose scheduled end has come and
// closes the days that have ended, also for servers nothing writes to (writers end a due season
// themselves, but no write may come; and a day's close is nobody's write). Every instance runs
// one; the servers are shared through one sorted set (server -> when it is next due), from which
// each tick claims the due ones (calendar-claim-1.lua). Exactly once comes from the work itself:
// a season's end is a compare-and-set on the season, a day's close holds a lease and commits by a
// compare-and-set on the last closed day.
//
// Servers enter the set when a writer first writes to them in its process, when their settings
// change, and, at each instance's start, by a scan of the boards (data written before, or by
// writers that have not run since): so the next instance to start closes the days missed while
// none ran.
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import * as scripts from '../redis/write-scripts.js'
import { redisUnavailability } from '../redis/errors.js'
import type { SettingsStore } from '../settings/settings-store.js'
import type { SeasonEnds } from '../seasons/season-ends.js'
import { seasonEndsAt } from '../seasons/season-state.js'
import type { DayCloser } from '../history/day-close.js'
import { zonedDay } from '../calendar/zoned.js'

export interface CalendarTickerOptions {
  redis: RedisClient
  keys: KeyBuilder
  settings: SettingsStore
  seasons: SeasonEnds
  days: DayCloser
  /** How often it looks for due servers, ms. */
  tickMs: number
  /** Where failures other than Redis being away are reported (pino's shape). */
  log: { error: (details: object, message: string) => void, info: (details: object, message: string) => void }
}

/** Servers claimed per tick. */
const CLAIM = 20
/**
 * How long a claimed server is left to its instance before another may take it: past a day's
 * close of the largest server. The close's own lease keeps the work once either way.
 */
const HOLD_MS = 60_000
/** A server the ticker could not finish is tried again this much later. */
const RETRY_MS = 5000
/** Boards read per SCAN call of the start's discovery. */
const SCAN_COUNT = 1000

export class CalendarTicker {
  readonly #o: CalendarTickerOptions
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #stopped = false

  constructor (options: CalendarTickerOptions) {
    this.#o = options
  }

  /** Names every server with a board to the ticker (in the background), then ticks. */
  start (): void {
    this.#running = this.#discover().catch((err: unknown) => { this.#failed(err, 'discovery') })
    this.#schedule()
  }

  /** Stops ticking; resolves when the work in progress is done. */
  async stop (): Promise<void> {
    this.#stopped = true
    clearTimeout(this.#timer)
    await this.#running
  }

  #schedule (): void {
    if (this.#stopped) return
    this.#timer = setTimeout(() => {
      const previous = this.#running ?? Promise.resolve()
      this.#running = previous.then(async () => { await this.tick() }).catch((err: unknown) => { this.#failed(err, 'tick') })
        .finally(() => { this.#schedule() })
    }, this.#o.tickMs)
    this.#timer.unref()
  }

  /** One look: every due server claimed now, visited one at a time. Returns the servers visited. */
  async tick (): Promise<string[]> {
    const { redis, keys } = this.#o
    const [now, ...due] = await scripts.calendarClaim(redis, { servers: keys.calendarServers(), count: CLAIM, holdMs: HOLD_MS })
    for (const guildId of due) {
      if (this.#stopped) break
      let next = Number(now) + RETRY_MS
      try {
        next = await this.visit(guildId, Number(now))
      } catch (err) {
        this.#failed(err, 'visit', guildId)
      }
      await redis.zadd(keys.calendarServers(), next, guildId)
    }
    return due
  }

  /**
   * Ends the server's season if due and closes its ended days, at Redis's time `nowMs`; returns
   * when it is next due (Unix ms: its day's end, or its season's if sooner).
   */
  async visit (guildId: string, nowMs: number): Promise<number> {
    const { settings: store, seasons, days, log } = this.#o
    if (await seasons.endIfDue(guildId, await store.readForWrite(guildId), nowMs)) log.info({ guildId }, 'season ended on schedule')
    const closed = await days.closeDue(guildId)
    if (closed.length > 0) log.info({ guildId, days: closed }, 'days closed')
    const settings = await store.readForWrite(guildId)
    const dayEnd = zonedDay(nowMs, settings.season.timezone).end
    return Math.min(dayEnd, seasonEndsAt(settings, settings.currentSeason) ?? Infinity)
  }

  async #discover (): Promise<void> {
    const { redis, keys } = this.#o
    const nodes = 'nodes' in redis ? redis.nodes('master') : [redis]
    for (const node of nodes) {
      let cursor = '0'
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', keys.boardPattern, 'COUNT', SCAN_COUNT)
        cursor = next
        const ids = found.map((key) => keys.guildOfBoard(key)).filter((id): id is string => id !== null)
        if (ids.length > 0) await redis.zadd(keys.calendarServers(), 'NX', ...ids.flatMap((id) => [0, id]))
      } while (cursor !== '0' && !this.#stopped)
    }
  }

  #failed (err: unknown, during: string, guildId?: string): void {
    if (redisUnavailability(err, this.#o.redis) !== null) return // Redis away: the next tick tries again
    this.#o.log.error({ err, during, ...(guildId === undefined ? {} : { guildId }) }, 'calendar ticker failed')
  }
}
