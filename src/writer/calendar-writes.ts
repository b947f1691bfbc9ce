// Writes that count by the server's calendar: the day's keys (history, the daily cap), the
// current season's board, the period boards. The keys and the window they hold in are computed
// from the server's settings and current season as this process caches them (SettingsCache),
// and the script judges (includes/calendar-counting.lua): Redis's clock outside the window, the
// settings' epoch moved, or the season due, it applies nothing and says which; the write learns
// the clock, reads the settings again, or ends the season, and goes again.
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import type { RedisClock } from '../redis/clock.js'
import { OUTSIDE_PERIOD_WINDOW, SEASON_DUE, SETTINGS_CHANGED } from '../redis/script-status.js'
import { type ServerCalendar, serverCalendar } from '../calendar/server-calendar.js'
import { keepUntil } from '../periods/periods.js'
import type { GuildWriteSettings, SettingsCache } from '../settings/settings-store.js'
import { seasonEndsAt } from '../seasons/season-state.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'

const DAY_MS = 86_400_000
/**
 * How long a day's keys outlive the day: past the longest history a server may keep, so a day
 * closed late (no instance ran) still finds the days after it, and a day never closed still goes.
 */
export const DAY_KEYS_KEPT_MS = (SETTINGS_LIMITS.historyDays.max + 2) * DAY_MS

/**
 * The span of one cooldowns hash (KeyBuilder.cooldownHour): as long as the longest cooldown, so the
 * last award that can still hold one off is in the current span's hash or the previous one's.
 */
export const COOLDOWN_HOUR_MS = SETTINGS_LIMITS.cooldownSeconds.max * 1000

/** A script's refusal: what calendar-counting.lua answers instead of applying. */
export interface CalendarRefusal {
  code: typeof OUTSIDE_PERIOD_WINDOW | typeof SETTINGS_CHANGED | typeof SEASON_DUE
  /** Redis's time (outside the window, season due) or the epoch (settings changed). */
  value: number
}

/** The refusal in a reply of the usual shape ({ code, value }, two elements), or null. */
export function calendarRefusal (reply: readonly unknown[]): CalendarRefusal | null {
  const [code, value] = reply
  if (reply.length !== 2 || (code !== OUTSIDE_PERIOD_WINDOW && code !== SETTINGS_CHANGED && code !== SEASON_DUE)) return null
  return { code, value: Number(value) }
}

/** What one try of a write is given: the settings it computes with, their calendar, and the keys and arguments they name. */
export interface CalendarWindow {
  settings: GuildWriteSettings
  calendar: ServerCalendar
  keys: {
    week: string
    month: string
    lastWeek: string
    lastMonth: string
    day: string
    dayGains: string
    dayStart: string
    /** The cooldowns hashes of the current hour, the one before, and the one before that (deleted once the current one begins). */
    cooldownHour: string
    cooldownHourPrev: string
    cooldownHourOld: string
  }
  args: {
    from: number
    until: number
    epoch: number
    /** '' when the season ends only by hand. */
    seasonEndsAt: number | ''
    dayLabel: string
    dayExpireAt: number
    weekExpireAt: number
    monthExpireAt: number
  }
}

/** Tries of one write: a period's or day's turn, a settings change and a season's end may each come once. */
const TRIES = 5

export interface CalendarWritesOptions {
  redis: RedisClient
  keys: KeyBuilder
  settings: SettingsCache
  clock: RedisClock
  /** Ends the server's current season, which a script found due at Redis time `nowMs` (another writer may have ended it first). */
  endDueSeason: (guildId: string, settings: GuildWriteSettings, nowMs: number) => Promise<unknown>
}

export class CalendarWrites {
  readonly #o: CalendarWritesOptions
  /** Servers this process has named to the calendar ticker (src/calendar-ticker/). */
  readonly #registered = new Set<string>()

  constructor (options: CalendarWritesOptions) {
    this.#o = options
  }

  /** The window, keys and arguments of a write to `guildId` at `nowMs` under `settings`. */
  window (guildId: string, settings: GuildWriteSettings, nowMs: number): CalendarWindow {
    const { keys } = this.#o
    const calendar = serverCalendar(settings, nowMs)
    const endsAt = seasonEndsAt(settings, settings.currentSeason)
    // The cooldowns' hour narrows the window like the calendar's spans: Redis's clock decides it too.
    const hour = Math.floor(nowMs / COOLDOWN_HOUR_MS)
    return {
      settings,
      calendar,
      keys: {
        week: keys.period(guildId, calendar.week.label),
        month: keys.period(guildId, calendar.month.label),
        lastWeek: keys.period(guildId, calendar.lastWeek.label),
        lastMonth: keys.period(guildId, calendar.lastMonth.label),
        day: keys.day(guildId, calendar.day.label),
        dayGains: keys.dayGains(guildId, calendar.day.label),
        dayStart: keys.dayStart(guildId, calendar.day.label),
        cooldownHour: keys.cooldownHour(guildId, hour),
        cooldownHourPrev: keys.cooldownHour(guildId, hour - 1),
        cooldownHourOld: keys.cooldownHour(guildId, hour - 2)
      },
      args: {
        from: Math.max(calendar.from, hour * COOLDOWN_HOUR_MS),
        until: Math.min(calendar.until, (hour + 1) * COOLDOWN_HOUR_MS),
        epoch: settings.epoch,
        seasonEndsAt: endsAt ?? '',
        dayLabel: calendar.day.label,
        dayExpireAt: calendar.day.end + DAY_KEYS_KEPT_MS,
        weekExpireAt: keepUntil(calendar.week),
        monthExpireAt: keepUntil(calendar.month)
      }
    }
  }

  /**
   * Runs `attempt` until its script applies (or refuses by its own rules): each refusal of the
   * calendar's (`refusalOf` finds it in the reply) is acted on and the write goes again.
   */
  async run<T> (guildId: string, attempt: (w: CalendarWindow) => Promise<T>, refusalOf: (reply: T) => CalendarRefusal | null): Promise<T> {
    const { settings: cache, clock } = this.#o
    this.#register(guildId)
    const cached = this.settingsOf(guildId)
    let settings = cached instanceof Promise ? await cached : cached
    for (let tries = 1; ; tries++) {
      const reply = await attempt(this.window(guildId, settings, clock.now()))
      const refusal = refusalOf(reply)
      if (refusal === null) return reply
      if (tries === TRIES) throw new Error(`a write to server ${guildId} was refused ${tries} times in a row by its calendar (last: ${refusal.code}): is Redis's clock jumping?`)
      if (refusal.code === SETTINGS_CHANGED) {
        settings = await cache.refresh(guildId, settings)
      } else {
        clock.observe(refusal.value)
        if (refusal.code === SEASON_DUE) {
          await this.#o.endDueSeason(guildId, settings, refusal.value)
          settings = await cache.refresh(guildId, settings)
        }
      }
    }
  }

  /**
   * The server's settings as cached: at once when they are, so that writes to one server are sent
   * in the order they are called, whether or not they depend on the settings (each waits for them).
   */
  settingsOf (guildId: string): GuildWriteSettings | Promise<GuildWriteSettings> {
    return this.#o.settings.peek(guildId) ?? this.#o.settings.get(guildId)
  }

  /** Names the server to the calendar ticker once per process (it ends its seasons and closes its days even with no writes). */
  #register (guildId: string): void {
    if (this.#registered.has(guildId)) return
    this.#registered.add(guildId)
    this.#o.redis.zadd(this.#o.keys.calendarServers(), 'NX', 0, guildId).catch(() => { this.#registered.delete(guildId) })
  }
}
