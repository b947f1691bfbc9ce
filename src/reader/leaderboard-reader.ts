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
import { followingRedirects } from '../redis/errors.js'
import { type Curve, DEFAULT_CURVE, isCurve, levelProgress } from '../levels/curves.js'
import { type Period, spanOfPeriod, utcDay } from '../periods/periods.js'
import { inCurrentPeriods, type PeriodAttempt } from '../periods/current-periods.js'
import { MemberNotFoundError } from '../errors.js'
import { formatMultiplier } from '../validation.js'
import type { Static } from 'typebox'
import type { AroundPage, LeaderboardEntry as LeaderboardEntrySchema, LeaderboardPage as LeaderboardPageSchema } from '../schemas/leaderboard.js'
import type { MemberList as MemberListSchema, MemberRecord as MemberRecordSchema } from '../schemas/member.js'
import type { GuildStats as GuildStatsSchema } from '../schemas/stats.js'

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

/** A read with the server's data version it was made at ("0": the server has never been written). */
export interface Versioned<T> {
  version: string
  /** Redis's clock at the read, Unix ms, where the result depends on the day. */
  nowMs?: number
  value: T
}

type Reply = string | number | null

/** A read about one member (its record, the ranks around it), or a 404 when the user is not a member. */
export function memberFound<R extends { value: unknown }> (read: R, guildId: string, userId: string): R & { value: NonNullable<R['value']> } {
  if (read.value === null || read.value === undefined) throw new MemberNotFoundError(guildId, userId)
  return read as R & { value: NonNullable<R['value']> }
}

/** The curve a settings reply names, or the default. */
export function curveOf (value: Reply | undefined): Curve {
  return isCurve(value) ? value : DEFAULT_CURVE
}

/**
 * Leaderboard entries from a read script's parallel lists, ranked from `firstRank`: board
 * members, the XP that sets each level, records, and the XP shown (a period's, or the same).
 */
function toEntries (firstRank: number, curve: Curve, members: readonly Reply[], xps: readonly Reply[],
  records: ReadonlyArray<string | null | undefined>, shownXps: readonly Reply[] = xps): LeaderboardEntry[] {
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
      level_progress: { xp: progress.xp, required: progress.required }
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

  constructor (redis: RedisClient, keys: KeyBuilder, clock: RedisClock = new RedisClock()) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
    this.clock = clock
    this.#versions = perTurnLoader(async (guildIds) => await this.#readVersions(guildIds), commandTimeoutOf(redis))
  }

  async #readVersions (guildIds: readonly string[]): Promise<Array<string | Error>> {
    const read = new Map<string, Promise<string | Error>>()
    for (const id of guildIds) {
      if (!read.has(id)) {
        read.set(id, followingRedirects(async () => await this.redis.get(this.keys.guild(id).version))
          .then((v) => v ?? '0', (err: unknown) => err instanceof Error ? err : new Error(String(err))))
      }
    }
    return await Promise.all(guildIds.map(async (id) => await (read.get(id) as Promise<string | Error>)))
  }

  /** Ranks (page-1)*limit+1 .. page*limit; a page past the end has no data but the real total. */
  async page (guildId: string, page: number, limit: number, period: Period = 'all'): Promise<LeaderboardPage> {
    return (await this.readPage(guildId, page, limit, period)).value
  }

  /** A page of the all-time board, or of a period's board (then with Redis's clock at the read: the period depends on the day). */
  async readPage (guildId: string, page: number, limit: number, period: Period = 'all'): Promise<Versioned<LeaderboardPage>> {
    if (period !== 'all') return await this.#readPeriodPage(guildId, page, limit, period)
    const k = this.keys.guild(guildId)
    const start = (page - 1) * limit
    const [version, total, curveReply, members, xps, records] =
      await this.redis.leaderboardPage(k.board, k.members, k.settings, k.version, start, start + limit - 1)
    const data = toEntries(start + 1, curveOf(curveReply), members, xps, records)
    return { version: version ?? '0', value: { data, total: Number(total), page } }
  }

  async member (guildId: string, userId: string): Promise<MemberRecord> {
    return memberFound(await this.readMember(guildId, userId), guildId, userId).value
  }

  async #readPeriodPage (guildId: string, page: number, limit: number, period: Exclude<Period, 'all'>): Promise<Versioned<LeaderboardPage>> {
    const k = this.keys.guild(guildId)
    const start = (page - 1) * limit
    const [version, nowMs, , total = 0, curveReply, members = [], periodXps = [], xps = [], records = []] =
      await inCurrentPeriods(this.clock, async (p) => {
        const reply = await this.redis.periodPage(this.keys.period(guildId, spanOfPeriod(period, p.from).label),
          k.board, k.members, k.settings, k.version, start, start + limit - 1, p.from, p.until)
        return periodRead(reply)
      })
    this.clock.observe(nowMs)
    const data = toEntries(start + 1, curveOf(curveReply), members, xps, records, periodXps)
    return { version: version ?? '0', nowMs, value: { data, total: Number(total), page } }
  }

  /** Ranks max(1, r - radius) .. min(total, r + radius) around the member's rank r, or null for a non-member. */
  async readAround (guildId: string, userId: string, radius: number): Promise<Versioned<Around | null>> {
    const k = this.keys.guild(guildId)
    const [version, total, curveReply, rank, first = 0, members = [], xps = [], records = []] =
      await this.redis.around(k.board, k.members, k.settings, k.version, boardMember(userId), radius)
    if (rank === null) return { version: version ?? '0', value: null }
    const data = toEntries(first + 1, curveOf(curveReply), members, xps, records)
    return { version: version ?? '0', value: { data, total: Number(total), rank: rank + 1 } }
  }

  /** The member's record, or null (with the version and time all the same) for a non-member or a hidden member. */
  async readMember (guildId: string, userId: string): Promise<Versioned<MemberRecord | null> & { nowMs: number }> {
    const read = await this.#readMember(guildId, userId, false)
    return { ...read, value: read.value as MemberRecord | null } // the script reads no hidden member: every rank is set
  }

  /** The member's record, hidden or not (the writer side's view: `visible`, and no rank while hidden), or null for a non-member. */
  async readAnyMember (guildId: string, userId: string): Promise<Versioned<AnyMemberRecord | null> & { nowMs: number }> {
    const read = await this.#readMember(guildId, userId, true)
    return { ...read, value: read.value === null ? null : { ...read.value, visible: read.value.rank !== null } }
  }

  async #readMember (guildId: string, userId: string, includeHidden: boolean): Promise<Versioned<RankedOrNot | null> & { nowMs: number }> {
    const k = this.keys.guild(guildId)
    const [version, nowMs, , xp, rank, record, curve, weekXp, monthXp] = await inCurrentPeriods(this.clock, async (p) => {
      const reply = await this.redis.member(k.board, k.members, k.settings, k.version,
        this.keys.period(guildId, p.week.label), this.keys.period(guildId, p.month.label), boardMember(userId), p.from, p.until, includeHidden ? '1' : '')
      return periodRead(reply)
    })
    this.clock.observe(nowMs)
    if (xp === null || xp === undefined) return { version: version ?? '0', nowMs, value: null }
    const value = memberRecord(userId, Number(xp), rank ?? null, record, curveOf(curve), weekXp, monthXp, nowMs)
    return { version: version ?? '0', nowMs, value }
  }

  /** The records of those of `userIds` (distinct) that are members, in the order given, and the ids that are not. */
  async readMembers (guildId: string, userIds: string[]): Promise<Versioned<MemberList> & { nowMs: number }> {
    const k = this.keys.guild(guildId)
    const [version, nowMs, , curveReply, xps = [], ranks = [], records = [], weekXps = [], monthXps = []] =
      await inCurrentPeriods(this.clock, async (p) => {
        const reply = await this.redis.memberBatch(k.board, k.members, k.settings, k.version,
          this.keys.period(guildId, p.week.label), this.keys.period(guildId, p.month.label), p.from, p.until, ...userIds.map(boardMember))
        return periodRead(reply)
      })
    this.clock.observe(nowMs)
    const curve = curveOf(curveReply)
    const data: MemberRecord[] = []
    const missing: string[] = []
    for (let i = 0; i < userIds.length; i++) {
      const userId = userIds[i] as string
      const xp = xps[i]
      if (xp === null || xp === undefined) missing.push(userId)
      else data.push(memberRecord(userId, Number(xp), Number(ranks[i]), records[i], curve, weekXps[i], monthXps[i], nowMs) as MemberRecord)
    }
    return { version: version ?? '0', nowMs, value: { data, missing } }
  }

  async stats (guildId: string): Promise<GuildStats> {
    return (await this.readStats(guildId)).value
  }

  async readStats (guildId: string): Promise<Versioned<GuildStats>> {
    const k = this.keys.guild(guildId)
    const [version, curve, hundredths, xpTotal, membersWithXp, levelSum, name, iconUrl] =
      await this.redis.guildStats(k.stats, k.settings, k.version, DEFAULT_CURVE)
    return {
      version: version === null || version === undefined ? '0' : String(version),
      value: {
        total_members: Number(membersWithXp ?? 0),
        total_xp: Number(xpTotal ?? 0),
        average_level: averageRoundedHalfUp(BigInt(levelSum ?? 0), BigInt(membersWithXp ?? 0)),
        xp_curve: curveOf(curve),
        xp_multiplier: formatMultiplier(Number(hundredths ?? DEFAULT_MULTIPLIER_HUNDREDTHS)),
        name: name === null || name === undefined ? null : String(name),
        icon_url: iconUrl === null || iconUrl === undefined ? null : String(iconUrl)
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

/** A member's record from a script's raw fields (rank 0-based; null: hidden). */
function memberRecord (userId: string, xp: number, rank: number | null, record: string | null | undefined, curve: Curve,
  weekXp: string | null | undefined, monthXp: string | null | undefined, nowMs: number): RankedOrNot {
  const { streak, lastClaim, username, displayName, avatarUrl } = parseRecord(record)
  const progress = levelProgress(curve, xp)
  return {
    user_id: userId,
    username: username ?? userId,
    display_name: displayName,
    avatar_url: avatarUrl,
    level: progress.level,
    xp,
    rank: rank === null ? null : rank + 1,
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
