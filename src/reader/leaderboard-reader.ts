// The read path the API serves: each read is one Lua script, so a page, a rank or the
// aggregates are consistent with the curve they are shown under and with the server's data
// version they were read at, in one round trip. Scripts return raw replies; board members and
// records are decoded here, outside Redis. The shapes are the response schemas' (src/schemas).
import type { RedisClient } from '../redis/client.js'
import { boardMember, type KeyBuilder, userIdFromBoardMember } from '../redis/keys.js'
import { parseRecord, usernameOfRecord } from '../redis/records.js'
import { defineCommands } from '../redis/scripts.js'
import { type Curve, DEFAULT_CURVE, isCurve, levelForXp } from '../levels/curves.js'
import { MemberNotFoundError } from '../errors.js'
import { formatMultiplier } from '../validation.js'
import type { Static } from 'typebox'
import type { LeaderboardEntry as LeaderboardEntrySchema, LeaderboardPage as LeaderboardPageSchema } from '../schemas/leaderboard.js'
import type { MemberRecord as MemberRecordSchema } from '../schemas/member.js'
import type { GuildStats as GuildStatsSchema } from '../schemas/stats.js'

const DAY_MS = 86_400_000
const DEFAULT_MULTIPLIER_HUNDREDTHS = 100

export type LeaderboardEntry = Static<typeof LeaderboardEntrySchema>
export type LeaderboardPage = Static<typeof LeaderboardPageSchema>
export type MemberRecord = Static<typeof MemberRecordSchema>
export type GuildStats = Static<typeof GuildStatsSchema>

/** A read with the server's data version it was made at ("0": the server has never been written). */
export interface Versioned<T> {
  version: string
  /** Redis's clock at the read, Unix ms, where the result depends on the day. */
  nowMs?: number
  value: T
}

type Reply = string | number | null

function curveOf (value: Reply | undefined): Curve {
  return isCurve(value) ? value : DEFAULT_CURVE
}

/** round(sum / count), halves up, in exact integer arithmetic. */
export function averageRoundedHalfUp (sum: bigint, count: bigint): number {
  if (count === 0n) return 0
  return Number((2n * sum + count) / (2n * count))
}

export class LeaderboardReader {
  readonly redis: RedisClient
  readonly keys: KeyBuilder

  constructor (redis: RedisClient, keys: KeyBuilder) {
    defineCommands(redis)
    this.redis = redis
    this.keys = keys
  }

  /** Ranks (page-1)*limit+1 .. page*limit; a page past the end has no data but the real total. */
  async page (guildId: string, page: number, limit: number): Promise<LeaderboardPage> {
    return (await this.readPage(guildId, page, limit)).value
  }

  async readPage (guildId: string, page: number, limit: number): Promise<Versioned<LeaderboardPage>> {
    const k = this.keys.guild(guildId)
    const start = (page - 1) * limit
    const [version, total, curveReply, members, xps, records] =
      await this.redis.leaderboardPage(k.board, k.members, k.settings, k.version, start, start + limit - 1)
    const curve = curveOf(curveReply)
    const data: LeaderboardEntry[] = new Array(members.length)
    for (let i = 0; i < members.length; i++) {
      const userId = userIdFromBoardMember(members[i] as string)
      const xp = Number(xps[i])
      data[i] = { rank: start + i + 1, user_id: userId, username: usernameOfRecord(records[i]) ?? userId, level: levelForXp(curve, xp), xp }
    }
    return { version: version ?? '0', value: { data, total: Number(total), page } }
  }

  async member (guildId: string, userId: string): Promise<MemberRecord> {
    const { value } = await this.readMember(guildId, userId)
    if (value === null) throw new MemberNotFoundError(guildId, userId)
    return value
  }

  /** The member's record, or null (with the version and time all the same) for a non-member. */
  async readMember (guildId: string, userId: string): Promise<Versioned<MemberRecord | null> & { nowMs: number }> {
    const k = this.keys.guild(guildId)
    const [version, nowMs, xpReply, rank, record, curve] =
      await this.redis.member(k.board, k.members, k.settings, k.version, boardMember(userId))
    if (xpReply === null) return { version: version ?? '0', nowMs, value: null }
    const xp = Number(xpReply)
    const { streak, lastClaim, username } = parseRecord(record)
    return {
      version: version ?? '0',
      nowMs,
      value: {
        user_id: userId,
        username: username ?? userId,
        level: levelForXp(curveOf(curve), xp),
        xp,
        rank: Number(rank) + 1,
        daily_streak: currentStreak(streak, lastClaim, nowMs),
        last_daily_claim: lastClaim === null ? null : new Date(lastClaim).toISOString()
      }
    }
  }

  async stats (guildId: string): Promise<GuildStats> {
    return (await this.readStats(guildId)).value
  }

  async readStats (guildId: string): Promise<Versioned<GuildStats>> {
    const k = this.keys.guild(guildId)
    const [version, curve, hundredths, xpTotal, membersWithXp, levelSum] =
      await this.redis.guildStats(k.stats, k.settings, k.version, DEFAULT_CURVE)
    return {
      version: version === null || version === undefined ? '0' : String(version),
      value: {
        total_members: Number(membersWithXp ?? 0),
        total_xp: Number(xpTotal ?? 0),
        average_level: averageRoundedHalfUp(BigInt(levelSum ?? 0), BigInt(membersWithXp ?? 0)),
        xp_curve: curveOf(curve),
        xp_multiplier: formatMultiplier(Number(hundredths ?? DEFAULT_MULTIPLIER_HUNDREDTHS))
      }
    }
  }

  /** The server's data version alone: what a cached read or an ETag is checked against. */
  async version (guildId: string): Promise<string> {
    return await this.redis.get(this.keys.guild(guildId).version) ?? '0'
  }
}

/** The UTC day of a time in Unix ms, as days since the epoch. */
export function utcDay (ms: number): number {
  return Math.floor(ms / DAY_MS)
}

/** The stored streak while it is alive (last claim today or yesterday, UTC), else 0. */
export function currentStreak (stored: number, lastClaimMs: number | null, nowMs: number): number {
  if (lastClaimMs === null) return 0
  const daysSince = utcDay(nowMs) - utcDay(lastClaimMs)
  return daysSince <= 1 ? stored : 0
}
