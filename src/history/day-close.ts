// A server's day closes once it has ended (in the server's time zone), by whichever instance gets
// there first (the calendar ticker's), exactly once: a lease while it runs, and a compare-and-set
// on the last closed day when it commits. It reads the board as it stood at the day's end without
// stopping writes: a member changed since has that value in the first later day-start hash that
// holds it; every other member still holds it on the board. From that snapshot it keeps the
// day's ranks by history index, the change records of the members the day touched, and the
// day's stats (docs/architecture.md, "Key schema"). Each step is a script over a chunk, its size
// paced by how long the step's calls take (ChunkPace), so that each holds Redis about a
// millisecond; the days missed while no instance ran are closed in order, up to history_days back.
import { randomUUID } from 'node:crypto'
import type { RedisClient } from '../redis/client.js'
import { redisNow } from '../redis/client.js'
import type { GuildKeys, KeyBuilder } from '../redis/keys.js'
import * as scripts from '../redis/write-scripts.js'
import { CloseDayStatus } from '../redis/script-status.js'
import { shiftDay, zonedDay } from '../calendar/zoned.js'
import type { GuildSettings } from '../settings/settings.js'
import { parseSettings } from '../settings/settings.js'

/** Members (or fields) a script call reads at most by default, and where each step's pace starts. */
const DEFAULT_CHUNK = 250
/** A change record's bytes (includes/history.lua's CHANGE_BYTES). */
const CHANGE_BYTES = 13
/** The most bytes of change records a close writes whole (#placeWhole): 5,000,000 members'. */
const WHOLE_MAX_BYTES = 65_000_000
/** The fields of `fresh` a read takes: 64 ranks calls' records, 208 KB at most. */
const FRESH_FIELDS_A_READ = 64

export interface DayCloseOptions {
  /**
   * The most members (or fields) a script call reads (default 250: the pace lowers it, never
   * raises it past that; larger calls of the board's step ran past 5 ms at times, see
   * docs/benchmarks.md).
   */
  chunk?: number
  /**
   * The time a script call should take, ms, as the closer measures it (default 1): each step's
   * calls read as many members as that holds at the step's lowest recent cost per member.
   */
  callMs?: number
  /** The lease's length, renewed by every step (default 30 s). */
  leaseMs?: number
}

/**
 * How many members a step's next call reads: as many as `callMs` holds at the lowest cost per
 * member of the step's last calls, a quarter more than the last at most, between `least` and
 * `most`. A member costs each step a different time (a first close gives each its history index),
 * so a constant would be either too many for some calls or too few for most; and the lowest of
 * the last calls' costs is the one a busy machine stretched least (a call that waited for the
 * core says nothing of the work it did).
 */
export class ChunkPace {
  #count: number
  readonly #least: number
  readonly #most: number
  readonly #callMs: number
  /** The last calls' ms per member, newest last. */
  readonly #costs: number[] = []

  constructor (most: number, callMs: number) {
    this.#most = most
    this.#least = Math.min(16, most)
    this.#count = Math.min(DEFAULT_CHUNK, most)
    this.#callMs = callMs
  }

  get count (): number {
    return this.#count
  }

  /** Runs `call` with the current count, and paces the next by the time it took. */
  async run<T> (call: (count: number) => Promise<T>): Promise<T> {
    const started = performance.now()
    const reply = await call(this.#count)
    this.#costs.push((performance.now() - started) / this.#count)
    if (this.#costs.length > 8) this.#costs.shift()
    const fits = Math.floor(this.#callMs / Math.min(...this.#costs))
    this.#count = Math.max(this.#least, Math.min(this.#most, fits, Math.ceil(this.#count * 1.25)))
    return reply
  }
}

/** The history hash's fields a close reads. */
export interface HistoryState {
  closedThrough: string | null
  closedFrom: string | null
  since: number | null
}

/** What closing one day came to. */
export type DayOutcome = 'closed' | 'already' | 'busy' | 'day-began'

/** A day's stats as kept: "<total_members>:<total_xp>:<active_members>:<xp_gained>". */
export interface DayStats {
  totalMembers: number
  totalXp: bigint
  activeMembers: number
  xpGained: bigint
}

export function formatDayStats (s: DayStats): string {
  return `${s.totalMembers}:${s.totalXp}:${s.activeMembers}:${s.xpGained}`
}

export function parseDayStats (text: string): DayStats {
  const [members = '0', xp = '0', active = '0', gained = '0'] = text.split(':')
  return { totalMembers: Number(members), totalXp: BigInt(xp), activeMembers: Number(active), xpGained: BigInt(gained) }
}

/** The first day of `timeZone` wholly after `sinceMs` (the day holding it, when it starts then). */
export function firstWholeDay (sinceMs: number, timeZone: string): string {
  const day = zonedDay(sinceMs, timeZone)
  return day.start === sinceMs ? day.label : shiftDay(day.label, 1)
}

/** The days to close now, oldest first: after the last closed one (or the first whole day history saw), within history_days. */
export function daysToClose (state: HistoryState, settings: Pick<GuildSettings, 'season' | 'historyDays'>, nowMs: number): string[] {
  if (state.since === null) return []
  const today = zonedDay(nowMs, settings.season.timezone).label
  const candidates = [
    firstWholeDay(state.since, settings.season.timezone),
    shiftDay(today, -settings.historyDays),
    ...(state.closedThrough === null ? [] : [shiftDay(state.closedThrough, 1)])
  ]
  const days: string[] = []
  for (let day = candidates.reduce((a, b) => (a > b ? a : b)); day < today; day = shiftDay(day, 1)) days.push(day)
  return days
}

export class DayCloser {
  readonly #redis: RedisClient
  readonly #keys: KeyBuilder
  readonly #chunk: number
  readonly #callMs: number
  readonly #leaseMs: number

  constructor (redis: RedisClient, keys: KeyBuilder, options: DayCloseOptions = {}) {
    this.#redis = redis
    this.#keys = keys
    this.#chunk = options.chunk ?? DEFAULT_CHUNK
    this.#callMs = options.callMs ?? 1
    this.#leaseMs = options.leaseMs ?? 30_000
  }

  /**
   * Closes every day of the server that has ended and is not closed yet (the oldest first, within
   * history_days). Returns the days this call closed; none when another instance is closing them.
   */
  async closeDue (guildId: string): Promise<string[]> {
    const k = this.#keys.guild(guildId)
    const token = randomUUID()
    const closed: string[] = []
    try {
      for (let pass = 0; pass < 3; pass++) {
        const [settingsHash, histFields, now] = await Promise.all([
          this.#redis.hgetall(k.settings),
          this.#redis.hmget(k.hist, 'closed_through', 'closed_from', 'since'),
          redisNow(this.#redis)
        ])
        const settings = parseSettings(settingsHash)
        const [closedThrough = null, closedFrom = null, since = null] = histFields
        const state = { closedThrough, closedFrom, since: since === null ? null : Number(since) }
        const days = daysToClose(state, settings, now)
        let outcome: DayOutcome = 'closed'
        let expected = closedThrough
        for (const day of days) {
          outcome = await this.#closeDay(guildId, k, token, day, expected, settings, now)
          if (outcome !== 'closed') break
          closed.push(day)
          expected = day
        }
        // A day that began while one closed: the close read too few later days; read them again.
        if (outcome !== 'day-began') break
      }
    } finally {
      await scripts.closeDayRelease(this.#redis, { lease: k.histLease, token }).catch(() => {})
    }
    return closed
  }

  async #closeDay (guildId: string, k: GuildKeys, token: string, day: string, expected: string | null,
    settings: GuildSettings, nowMs: number): Promise<DayOutcome> {
    const keys = this.#keys
    const redis = this.#redis
    const lease = { lease: k.histLease, token, leaseMs: this.#leaseMs }
    const ranksDay = keys.histRanks(guildId, day)
    const changesDay = keys.histChanges(guildId, day)
    const begun = await scripts.closeDayBegin(redis, { ...k, ...lease, snapshot: k.histSnapshot, order: k.histOrder, ranksDay, changesDay, fresh: k.histFresh, label: day })
    if (begun === CloseDayStatus.alreadyClosed) return 'already'
    if (begun === CloseDayStatus.leaseLost) return 'busy'

    const today = zonedDay(nowMs, settings.season.timezone)
    const later: string[] = []
    for (let d = shiftDay(day, 1); d <= today.label; d = shiftDay(d, 1)) later.push(d)
    const todayStart = keys.dayStart(guildId, today.label)
    const paces = new Map<scripts.CloseStep, ChunkPace>()
    const paceOf = (step: scripts.CloseStep): ChunkPace => {
      const pace = paces.get(step) ?? new ChunkPace(this.#chunk, this.#callMs)
      paces.set(step, pace)
      return pace
    }
    /** One call of a step, its chunk paced by the step's calls before it. */
    const call = async (step: scripts.CloseStep, input: Record<string, string | number>): Promise<Array<string | number>> =>
      await paceOf(step).run(async (count) => await scripts.closeDayStep(redis, step, { ...lease, ...input, count } as never))

    /** A step over a day-start hash, a chunk at a time (HSCAN's cursor). */
    const scanWith = async (step: 'closeDayStarts' | 'closeDayTouched', input: Record<string, string>,
      each: (reply: Array<string | number>) => void = () => {}): Promise<boolean> => {
      let cursor = '0'
      do {
        const reply = await call(step, { ...input, cursor })
        if (reply[0] !== CloseDayStatus.done) return false
        each(reply)
        cursor = String(reply[1] ?? '0')
      } while (cursor !== '0')
      return true
    }
    /** A day-start hash into the snapshot. */
    const scan = async (dayStart: string): Promise<boolean> => await scanWith('closeDayStarts', { dayStart, snapshot: k.histSnapshot })
    /** The board in rank order, each chunk from the last member of the one before (close-day-board-4.lua). */
    const readBoard = async (): Promise<boolean> => {
      let [anchor, anchorScore] = ['', '']
      for (;;) {
        const [status, member, score] = await call('closeDayBoard', { board: k.board, dayStart: todayStart, snapshot: k.histSnapshot, anchor, anchorScore })
        if (status !== CloseDayStatus.done) return false
        if (member === undefined) return true
        ;[anchor, anchorScore] = [String(member), String(score)]
      }
    }
    /** A step by position, each call from where the one before ended, until one reads fewer than it asked for. */
    const walk = async (step: 'closeDayRanks' | 'closeDayChanges', input: Record<string, string>,
      each: (reply: Array<string | number>) => void): Promise<boolean> => {
      for (let first = 0; ;) {
        const asked = paceOf(step).count
        const reply = await call(step, { ...input, first })
        if (reply[0] !== CloseDayStatus.done) return false
        each(reply)
        const read = Number(reply[1])
        if (read < asked) return true
        first += read
      }
    }

    // The snapshot: later days' values, oldest first, then the board, then today's again (members
    // changed while the board was read, and gone from it since).
    for (const d of later) if (!await scan(keys.dayStart(guildId, d))) return 'busy'
    if (!await readBoard()) return 'busy'
    if (!await scan(todayStart)) return 'busy'
    for (;;) {
      const [status, left = 0] = await call('closeDayTrim', { snapshot: k.histSnapshot })
      if (status !== CloseDayStatus.done) return 'busy'
      if (Number(left) === 0) break
    }

    const stats: DayStats = { totalMembers: 0, totalXp: 0n, activeMembers: 0, xpGained: 0n }
    const dayBoard = keys.day(guildId, day)
    const dayGains = keys.dayGains(guildId, day)
    const dayStart = keys.dayStart(guildId, day)
    if (!await walk('closeDayRanks', { hist: k.hist, snapshot: k.histSnapshot, members: k.members, ranksDay, board: k.board, dayStart, day: dayBoard, dayGains, order: k.histOrder, fresh: k.histFresh }, (reply) => {
      stats.totalXp += BigInt(reply[2] ?? 0)
      stats.totalMembers += Number(reply[3] ?? 0)
      stats.activeMembers += Number(reply[4] ?? 0)
      stats.xpGained += BigInt(reply[5] ?? 0)
    })) return 'busy'
    if (!await scanWith('closeDayTouched', { dayStart, day: dayBoard, dayGains, members: k.members, snapshot: k.histSnapshot, order: k.histOrder, fresh: k.histFresh }, (reply) => {
      stats.activeMembers += Number(reply[2] ?? 0)
      stats.xpGained += BigInt(reply[3] ?? 0)
    })) return 'busy'
    const placed = await this.#placeWhole(guildId, k, token, changesDay)
    if (placed === 'busy') return 'busy'
    if (placed === 'walk' && !await walk('closeDayChanges', { order: k.histOrder, day: dayBoard, dayGains, dayStart, changesDay, fresh: k.histFresh }, () => {})) return 'busy'

    const keepFrom = shiftDay(today.label, -settings.historyDays)
    const [status] = await scripts.closeDayStep(redis, 'closeDayCommit', {
      ...k,
      lease: k.histLease,
      token,
      ranksLatest: k.histRanksLatest,
      ranksPrev: expected === null ? ranksDay : keys.histRanks(guildId, expected),
      ranksDay,
      snapshot: k.histSnapshot,
      order: k.histOrder,
      fresh: k.histFresh,
      day: dayBoard,
      dayGains,
      dayStart,
      label: day,
      expected: expected ?? '',
      stats: formatDayStats(stats),
      until: today.end,
      contiguous: expected === shiftDay(day, -1) ? '1' : '0',
      keepFrom
    })
    if (status === CloseDayStatus.dayBegan) return 'day-began'
    if (status === CloseDayStatus.alreadyClosed) return 'already'
    if (status !== CloseDayStatus.done) return 'busy'
    await this.#forgetBefore(guildId, k, keepFrom)
    return 'closed'
  }

  /**
   * The change records of a day in a server's first close, where every record is one the ranks
   * step kept in `fresh` (no member had an index before it), read a few fields at a time and
   * written whole: one SET to a staging key of this closer's, renamed into place under the lease
   * (close-day-place-3.lua). The changes step would copy them into the day's string a chunk a call,
   * and a string of megabytes grown in a script call is copied whole each time Redis moves it to
   * grow it. Returns 'walk' for any other day (or one of more than WHOLE_MAX_BYTES, or whose
   * `fresh` does not hold its records one after another): the changes step writes it.
   */
  async #placeWhole (guildId: string, k: GuildKeys, token: string, changesDay: string): Promise<'placed' | 'walk' | 'busy'> {
    const redis = this.#redis
    const [[from, given], ordered] = await Promise.all([redis.hmget(k.histFresh, 'from', 'n'), redis.zcard(k.histOrder)])
    const records = Number(given ?? 0)
    if (from !== '0' || ordered > 0 || records === 0 || records * CHANGE_BYTES > WHOLE_MAX_BYTES) return 'walk'
    // Each field holds one ranks call's records, named by the number of records before them.
    const fields = (await redis.hkeys(k.histFresh)).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(a) - Number(b))
    const parts: Buffer[] = []
    let written = 0
    for (let i = 0; i < fields.length; i += FRESH_FIELDS_A_READ) {
      const names = fields.slice(i, i + FRESH_FIELDS_A_READ)
      const values = await redis.hmgetBuffer(k.histFresh, ...names)
      for (const [j, value] of values.entries()) {
        if (value === null || Number(names[j]) !== written) return 'walk'
        parts.push(value)
        written += value.length / CHANGE_BYTES
      }
    }
    if (written !== records) return 'walk'
    const staging = this.#keys.histChangesStaging(guildId, token)
    await redis.set(staging, Buffer.concat(parts), 'PX', this.#leaseMs)
    const [status] = await scripts.closeDayStep(redis, 'closeDayPlace', { lease: k.histLease, token, leaseMs: this.#leaseMs, staging, changesDay })
    return status === CloseDayStatus.done ? 'placed' : 'busy'
  }

  /** Frees the closed days before `keepFrom` (history_days back). */
  async #forgetBefore (guildId: string, k: GuildKeys, keepFrom: string): Promise<void> {
    for (const day of await this.#redis.hkeys(k.histStats)) {
      if (day >= keepFrom) continue
      await scripts.closeDayForget(this.#redis, { ...k, ranks: this.#keys.histRanks(guildId, day), changes: this.#keys.histChanges(guildId, day), label: day })
    }
  }
}
