// The read path the API serves: each read is one Lua script, so a page, a rank or the
// aggregates are consistent with the curve they are shown under and with the server's data
// version they were read at, in one round trip. Scripts return raw replies; board members and
// records are decoded here, outside Redis. The shapes are the response schemas' (src/schemas).
import type { RedisClient } from '../redis/client.js'
import { boardMember, type KeyBuilder, userIdFromBoardMember } from '../redis/keys.js'
import { parseRecord } from '../redis/records.js'
import { defineCommands } from '../redis/scripts.js'
import { RedisClock } from '../redis/clock.js'
import type DataLoader from 'dataloader'
import { perTurnLoader } from '../redis/per-turn.js'
import { commandTimeoutOf } from '../redis/deadline.js'
import { type Curve, DEFAULT_CURVE, isCurve, type LevelCurve, levelProgress, xpForLevel } from '../levels/curves.js'
import { type Period, spanOfPeriod, utcDay } from '../periods/periods.js'
import { inCurrentPeriods, type PeriodAttempt } from '../periods/current-periods.js'
import { MemberNotFoundError, SeasonNotFoundError } from '../errors.js'
import { SETTINGS_LIMITS } from '../settings/settings.js'
import { formatMultiplier } from '../validation.js'
import type { Static } from 'typebox'
import type { AroundPage, LeaderboardEntry as LeaderboardEntrySchema, LeaderboardPage as LeaderboardPageSchema } from '../schemas/leaderboard.js'
import type { MemberList as MemberListSchema, MemberRecord as MemberRecordSchema } from '../schemas/member.js'
import type { GuildStats as GuildStatsSchema } from '../schemas/stats.js'
import type { RoleRewards as RoleRewardsSchema } from '../schemas/role-rewards.js'
import { parseSettings } from '../settings/settings.js'
import { SettingsStore } from '../settings/settings-store.js'
import { LevelCurves } from './level-curves.js'
import { CalendarReads, type MemberHistory, type SeasonList, type StatsHistory } from './calendar-reads.js'
import type { Versioned } from './versioned.js'

const DEFAULT_MULTIPLIER_HUNDREDTHS = 100

export type LeaderboardEntry = Static<typeof LeaderboardEntrySchema>
export type LeaderboardPage = Static<typeof LeaderboardPageSchema>
export type MemberRecord = Static<typeof MemberRecordSchema>
/** A member's record for the writer side, which sees hidden members too: no rank while hidden. */
export type AnyMemberRecord = RankedOrNot & { visible: boolean }
/** A member's record whose rank is null while it is hidden. */
type RankedOrNot = Omit<MemberRecord, 'rank'> & { rank: number | null }
export type MemberList = Static<typeof MemberListSchema>
export type Around = Static<typeof AroundPage>
export type GuildStats = Static<typeof GuildStatsSchema>
export type RoleRewards = Static<typeof RoleRewardsSchema>

export type { Versioned } from './versioned.js'

type Reply = string | number | null

/** A read about one member (its record, the ranks around it), or a 404 when the user is not a member. */
export function memberFound<R extends { value: unknown }> (read: R, guildId: string, userId: string): R & { value: NonNullable<R['value']> } {
  if (read.value === null || read.value === undefined) throw new MemberNotFoundError(guildId, userId)
  return read as R & { value: NonNullable<R['value']> }
}

/** The built-in curve a settings reply names, or the default. */
export function curveOf (value: Reply | undefined): Curve {
  return isCurve(value) ? value : DEFAULT_CURVE
}

/**
 * A board to rank by: all time (undefined), the current season, or a season by id. A season's
 * board holds the XP gained in it; a season past season_retention is not found.
 */
export type SeasonRef = 'current' | number | undefined

/** rank_change: the rank at the last closed day's end (0: none then) minus the rank now; null without one. */
export function rankChange (previous: number | undefined, rank: number): number | null {
  return previous === undefined || previous === 0 ? null : previous - rank
}

/**
 * Leaderboard entries from a read script's parallel lists, ranked from `firstRank`: board
 * members, the XP that sets each level, records, the XP shown (a period's or a season's, or the
 * same) and the ranks at the end of the last closed day (none for a period's or a season's).
 */
function toEntries (firstRank: number, curve: LevelCurve, members: readonly Reply[], xps: readonly Reply[],
  records: ReadonlyArray<string | null | undefined>, shownXps: readonly Reply[] = xps, previousRanks: readonly number[] = []): LeaderboardEntry[] {
  const data: LeaderboardEntry[] = new Array(members.length)
  for (let i = 0; i < members.length; i++) {
    const userId = userIdFromBoardMember(members[i] as string)
    const { username, displayName, avatarUrl } = parseRecord(records[i])
    const progress = levelProgress(curve, Number(xps[i] ?? 0))
    data[i] = {
      rank: firstRank + i,
      user_id: userId,
      username: username ?? userId,
      display_name: displayName,
      avatar_url: avatarUrl,
      level: progress.level,
      xp: Number(shownXps[i]),
      level_progress: { xp: progress.xp, required: progress.required },
      rank_change: rankChange(previousRanks[i], firstRank + i)
    }
  }
  return data
}

/** round(sum / count), halves up, in exact integer arithmetic. */
export function averageRoundedHalfUp (sum: bigint, count: bigint): number {
  if (count === 0n) return 0
  return Number((2n * sum + count) / (2n * count))
}

export class LeaderboardReader {
  readonly redis: RedisClient
  readonly keys: KeyBuilder
  /** Redis's clock as estimated locally: it names the current period boards (Redis's clock decides). */
  readonly clock: RedisClock
  /**
   * Version reads of one event-loop turn: one GET per server, shared by the turn's requests. A
   * failed GET fails only its own server's reads (on a cluster, servers live on other masters).
   */
  readonly #versions: DataLoader<string, string>
  /** The curves the reads name, a server's custom one read once per settings epoch. */
  readonly curves: LevelCurves
  /** Seasons and history. */
  readonly #calendar: CalendarReads

  constructor (redis: RedisClient, keys: KeyBuilder, clock: RedisClock = new RedisClock()) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
    this.clock = clock
    this.curves = new LevelCurves(new SettingsStore(redis, keys))
    this.#calendar = new CalendarReads(redis, keys)
    this.#versions = perTurnLoader(async (guildIds) => await this.#readVersions(guildIds), commandTimeoutOf(redis))
  }

  async #readVersions (guildIds: readonly string[]): Promise<Array<string | Error>> {
    const read = new Map<string, Promise<string | Error>>()
    for (const id of guildIds) {
      if (!read.has(id)) {
        read.set(id, this.redis.get(this.keys.guild(id).version)
          .then((v) => v ?? '0', (err: unknown) => err instanceof Error ? err : new Error(String(err))))
      }
    }
    return await Promise.all(guildIds.map(async (id) => await (read.get(id) as Promise<string | Error>)))
  }

  /** Ranks (page-1)*limit+1 .. page*limit; a page past the end has no data but the real total. */
  async page (guildId: string, page: number, limit: number, period: Period = 'all', season?: SeasonRef): Promise<LeaderboardPage> {
    return (await this.readPage(guildId, page, limit, period, season)).value
  }

  /**
   * The keys and arguments every board read takes for seasons and history (includes/board-reads.lua):
   * the ranks at the last closed day's end, the seasons, the current season's board and the one asked.
   */
  seasonKeys (guildId: string, season: SeasonRef): { keys: [ranksLatest: string, seasons: string, seasonCurrent: string, seasonBoard: string], season: string } {
    const k = this.keys.guild(guildId)
    return {
      keys: [k.histRanksLatest, k.seasons, k.seasonCurrent, typeof season === 'number' ? this.keys.season(guildId, season) : k.seasonCurrent],
      season: season === undefined ? '' : String(season)
    }
  }

  /**
   * A page of the all-time board, a season's, or a period's (then with Redis's clock at the read:
   * the period depends on the day); the all-time board's entries carry their rank_change.
   */
  async readPage (guildId: string, page: number, limit: number, period: Period = 'all', season?: SeasonRef): Promise<Versioned<LeaderboardPage>> {
    if (period !== 'all') return await this.#readPeriodPage(guildId, page, limit, period)
    const start = (page - 1) * limit
    const { version, season: id, total, curve, members, shownXps, xps, records, previousRanks } = await this.pageScript(guildId, start, start + limit - 1, season)
    if (id < 0) throw new SeasonNotFoundError(guildId, season)
    const data = toEntries(start + 1, curve, members, xps, records, shownXps, previousRanks)
    return { version, value: { data, total, page } }
  }

  /** The page script's reply, parsed: ranks `start` to `stop` (0-based) of the board `season` names; season -1 when it is not kept. */
  async pageScript (guildId: string, start: number, stop: number, season?: SeasonRef): Promise<{
    version: string,
    season: number,
    total: number,
    curve: LevelCurve,
    members: string[],
    shownXps: string[],
    xps: Array<string | null>,
    records: Array<string | null>,
    previousRanks: number[]
  }> {
    const k = this.keys.guild(guildId)
    const s = this.seasonKeys(guildId, season)
    const { reply: [version, id, total = 0, , members = [], shownXps = [], xps = [], records = [], previousRanks = []], curve } = await this.curves.read(guildId,
      async () => await this.redis.leaderboardPage(k.board, k.members, k.settings, k.version, ...s.keys, start, stop, s.season, SETTINGS_LIMITS.seasonRetention.default),
      (r) => r[3])
    return { version: version ?? '0', season: Number(id), total: Number(total), curve, members, shownXps, xps, records, previousRanks }
  }

  async member (guildId: string, userId: string, season?: SeasonRef): Promise<MemberRecord> {
    return memberFound(await this.readMember(guildId, userId, season), guildId, userId).value
  }

  async #readPeriodPage (guildId: string, page: number, limit: number, period: Exclude<Period, 'all'>): Promise<Versioned<LeaderboardPage>> {
    const k = this.keys.guild(guildId)
    const start = (page - 1) * limit
    const { reply: [version, nowMs, , total = 0, , members = [], periodXps = [], xps = [], records = []], curve } =
      await this.curves.read(guildId, async () => await inCurrentPeriods(this.clock, async (p) => {
        const reply = await this.redis.periodPage(this.keys.period(guildId, spanOfPeriod(period, p.from).label),
          k.board, k.members, k.settings, k.version, start, start + limit - 1, p.from, p.until)
        return periodRead(reply)
      }), (r) => r[4])
    this.clock.observe(nowMs)
    const data = toEntries(start + 1, curve, members, xps, records, periodXps)
    return { version: version ?? '0', nowMs, value: { data, total: Number(total), page } }
  }

  /**
   * Ranks max(1, r - radius) .. min(total, r + radius) around the member's rank r (on the all-time
   * board or a season's), or null for a user not on that board.
   */
  async readAround (guildId: string, userId: string, radius: number, season?: SeasonRef): Promise<Versioned<Around | null>> {
    const k = this.keys.guild(guildId)
    const s = this.seasonKeys(guildId, season)
    const { reply: [version, id, total = 0, , rank, first = 0, members = [], shownXps = [], xps = [], records = [], previousRanks = []], curve } = await this.curves.read(guildId,
      async () => await this.redis.around(k.board, k.members, k.settings, k.version, ...s.keys, boardMember(userId), radius, s.season, SETTINGS_LIMITS.seasonRetention.default),
      (r) => r[3])
    if (id < 0) throw new SeasonNotFoundError(guildId, season)
    if (rank === null || rank === undefined) return { version: version ?? '0', value: null }
    const data = toEntries(first + 1, curve, members, xps, records, shownXps, previousRanks)
    return { version: version ?? '0', value: { data, total: Number(total), rank: rank + 1 } }
  }

  /**
   * The member's record (its XP and rank all time, or in a season), or null (with the version
   * and time all the same) for a user not on that board or hidden.
   */
  async readMember (guildId: string, userId: string, season?: SeasonRef): Promise<Versioned<MemberRecord | null> & { nowMs: number }> {
    const read = await this.#readMember(guildId, userId, season, false)
    return { ...read, value: read.value as MemberRecord | null } // the script reads no hidden member: every rank is set
  }

  /** The member's all-time record, hidden or not (the writer side's view: `visible`, and no rank while hidden), or null for a non-member. */
  async readAnyMember (guildId: string, userId: string): Promise<Versioned<AnyMemberRecord | null> & { nowMs: number }> {
    const read = await this.#readMember(guildId, userId, undefined, true)
    return { ...read, value: read.value === null ? null : { ...read.value, visible: read.value.rank !== null } }
  }

  async #readMember (guildId: string, userId: string, season: SeasonRef, includeHidden: boolean): Promise<Versioned<RankedOrNot | null> & { nowMs: number }> {
    const k = this.keys.guild(guildId)
    const s = this.seasonKeys(guildId, season)
    const { reply: [version, nowMs, , id = 0, xp, rank, record, , weekXp, monthXp, allTimeXp, previousRank], curve } = await this.curves.read(guildId,
      async () => await inCurrentPeriods(this.clock, async (p) => {
        const reply = await this.redis.member(k.board, k.members, k.settings, k.version, this.keys.period(guildId, p.week.label),
          this.keys.period(guildId, p.month.label), ...s.keys, boardMember(userId), p.from, p.until, s.season, SETTINGS_LIMITS.seasonRetention.default,
          includeHidden ? '1' : '')
        return periodRead(reply)
      }), (r) => r[7])
    this.clock.observe(nowMs)
    if (id < 0) throw new SeasonNotFoundError(guildId, season)
    const value = xp === null || xp === undefined
      ? null
      : memberRecord(userId, { xp: Number(xp), allTimeXp: Number(allTimeXp ?? 0), rank: rank === null || rank === undefined ? null : Number(rank), previousRank }, record, curve, weekXp, monthXp, nowMs)
    return { version: version ?? '0', nowMs, value }
  }

  /**
   * The records of those of `userIds` (distinct) on the board (all time, or a season's), in the
   * order given, and the ids that are not.
   */
  async readMembers (guildId: string, userIds: string[], season?: SeasonRef): Promise<Versioned<MemberList> & { nowMs: number }> {
    const k = this.keys.guild(guildId)
    const s = this.seasonKeys(guildId, season)
    const { reply: [version, nowMs, , id = 0, , xps = [], ranks = [], records = [], weekXps = [], monthXps = [], allTimeXps = [], previousRanks = []], curve } =
      await this.curves.read(guildId, async () => await inCurrentPeriods(this.clock, async (p) => {
        const reply = await this.redis.memberBatch(k.board, k.members, k.settings, k.version, this.keys.period(guildId, p.week.label),
          this.keys.period(guildId, p.month.label), ...s.keys, p.from, p.until, s.season, SETTINGS_LIMITS.seasonRetention.default, ...userIds.map(boardMember))
        return periodRead(reply)
      }), (r) => r[4])
    this.clock.observe(nowMs)
    if (id < 0) throw new SeasonNotFoundError(guildId, season)
    const data: MemberRecord[] = []
    const missing: string[] = []
    for (let i = 0; i < userIds.length; i++) {
      const userId = userIds[i] as string
      const xp = xps[i]
      if (xp === null || xp === undefined) {
        missing.push(userId)
      } else {
        const standing = { xp: Number(xp), allTimeXp: Number(allTimeXps[i] ?? 0), rank: Number(ranks[i]), previousRank: previousRanks[i] }
        data.push(memberRecord(userId, standing, records[i], curve, weekXps[i], monthXps[i], nowMs) as MemberRecord)
      }
    }
    return { version: version ?? '0', nowMs, value: { data, missing } }
  }

  /** The server's seasons, newest first (the current one, then the ended ones kept), a page at a time. */
  async readSeasons (guildId: string, page: number, limit: number): Promise<Versioned<SeasonList>> {
    return await this.#calendar.seasons(guildId, page, limit)
  }

  /** A member's XP, XP gained and rank at the end of each of the last `days` closed days; null for a non-member. */
  async readMemberHistory (guildId: string, userId: string, days: number): Promise<Versioned<MemberHistory | null>> {
    return await this.#calendar.memberHistory(guildId, userId, days)
  }

  /** The server's members, XP, active members and XP gained at the end of each of the last `days` closed days. */
  async readStatsHistory (guildId: string, days: number): Promise<Versioned<StatsHistory>> {
    return await this.#calendar.statsHistory(guildId, days)
  }

  async stats (guildId: string): Promise<GuildStats> {
    return (await this.readStats(guildId)).value
  }

  async readStats (guildId: string): Promise<Versioned<GuildStats>> {
    const k = this.keys.guild(guildId)
    const [version, curve, hundredths, xpTotal, membersWithXp, levelSum, name, iconUrl] =
      await this.redis.guildStats(k.stats, k.settings, k.version, k.board, DEFAULT_CURVE)
    return {
      version: version === null || version === undefined ? '0' : String(version),
      value: {
        total_members: Number(membersWithXp ?? 0),
        total_xp: Number(xpTotal ?? 0),
        average_level: averageRoundedHalfUp(BigInt(levelSum ?? 0), BigInt(membersWithXp ?? 0)),
        xp_curve: curve === 'custom' ? 'custom' : curveOf(curve),
        xp_multiplier: formatMultiplier(Number(hundredths ?? DEFAULT_MULTIPLIER_HUNDREDTHS)),
        name: name === null || name === undefined ? null : String(name),
        icon_url: iconUrl === null || iconUrl === undefined ? null : String(iconUrl)
      }
    }
  }

  /** The server's role rewards, each with the XP that reaches its level under the server's curve. */
  async readRoleRewards (guildId: string): Promise<Versioned<RoleRewards>> {
    const k = this.keys.guild(guildId)
    const { reply: [version, rewards, mode], curve } = await this.curves.read(guildId,
      async () => await this.redis.roleRewards(k.settings, k.version), (r) => r[3])
    const parsed = parseSettings({ role_rewards: rewards ?? '', role_rewards_mode: mode ?? '' })
    const top = typeof curve === 'string' ? Infinity : curve.thresholds.length
    return {
      version: version ?? '0',
      value: {
        mode: parsed.roleRewardsMode,
        data: parsed.roleRewards.map((r) => ({ level: r.level, role_id: r.roleId, xp: r.level > top ? null : xpForLevel(curve, r.level) }))
      }
    }
  }

  /**
   * The server's data version alone: what a cached read or an ETag is checked against. Read after
   * the call (with the other calls of the same turn), so never older than the data at the call.
   */
  async version (guildId: string): Promise<string> {
    return await this.#versions.load(guildId)
  }
}

/** A read script's reply as a period attempt: `current` (its third field) 0 asks for another try at its time. */
function periodRead<T extends [unknown, number, number, ...unknown[]]> (reply: T): PeriodAttempt<T> {
  return reply[2] === 1 ? { done: reply } : { outsideAt: reply[1] }
}

/**
 * A member's standing on the board read: its XP and rank there (0-based; a season's, or all
 * time), its all-time XP (its level), and its rank at the last closed day's end (all time only).
 */
interface Standing {
  xp: number
  allTimeXp: number
  /** null: hidden (read by the writer side only). */
  rank: number | null
  previousRank: number | undefined
}

/** A member's record from a script's raw fields (rank null: hidden). */
function memberRecord (userId: string, standing: Standing, record: string | null | undefined, curve: LevelCurve,
  weekXp: string | null | undefined, monthXp: string | null | undefined, nowMs: number): RankedOrNot {
  const { streak, lastClaim, username, displayName, avatarUrl } = parseRecord(record)
  const progress = levelProgress(curve, standing.allTimeXp)
  return {
    user_id: userId,
    username: username ?? userId,
    display_name: displayName,
    avatar_url: avatarUrl,
    level: progress.level,
    xp: standing.xp,
    rank: standing.rank === null ? null : standing.rank + 1,
    rank_change: standing.rank === null ? null : rankChange(standing.previousRank, standing.rank + 1),
    daily_streak: currentStreak(streak, lastClaim, nowMs),
    last_daily_claim: lastClaim === null ? null : new Date(lastClaim).toISOString(),
    weekly_xp: Number(weekXp ?? 0),
    monthly_xp: Number(monthXp ?? 0),
    level_progress: { xp: progress.xp, required: progress.required }
  }
}

/** The stored streak while it is alive (last claim today or yesterday, UTC), else 0. */
export function currentStreak (stored: number, lastClaimMs: number | null, nowMs: number): number {
  if (lastClaimMs === null) return 0
  const daysSince = utcDay(nowMs) - utcDay(lastClaimMs)
  return daysSince <= 1 ? stored : 0
}
