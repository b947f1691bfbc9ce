// The read path the API serves: each read is one Lua script, so a page, a rank or the
// aggregates are consistent with the curve they are shown under, in one round trip. The shapes
// are the response schemas' (src/schemas), so what is read is what is served.
import type { RedisClient } from '../redis/client.js'
import { defineCommands } from '../redis/scripts.js'
import { boardMember, type KeyBuilder } from '../redis/keys.js'
import { type Curve, DEFAULT_CURVE, isCurve, levelForXp } from '../levels/curves.js'
import { MemberNotFoundError } from '../errors.js'
import { formatMultiplier } from '../validation.js'
import type { Static } from 'typebox'
import type { LeaderboardEntry as LeaderboardEntrySchema, LeaderboardResponse } from '../schemas/leaderboard.js'
import type { MemberRecord as MemberRecordSchema } from '../schemas/member.js'
import type { GuildStats as GuildStatsSchema } from '../schemas/stats.js'

const DAY_MS = 86_400_000
const DEFAULT_MULTIPLIER_HUNDREDTHS = 100

export type LeaderboardEntry = Static<typeof LeaderboardEntrySchema>
export type LeaderboardPage = Static<typeof LeaderboardResponse>
export type MemberRecord = Static<typeof MemberRecordSchema>
export type GuildStats = Static<typeof GuildStatsSchema>

type Reply = string | number | null

function curveOf (value: Reply | undefined): Curve {
  return isCurve(value) ? value : DEFAULT_CURVE
}

/** A member that was never given a name is shown under its id. */
function usernameOf (value: Reply | undefined, userId: string): string {
  return typeof value === 'string' && value !== '' ? value : userId
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
    this.redis = redis
    this.keys = keys
    defineCommands(redis)
  }

  /** Ranks (page-1)*limit+1 .. page*limit; a page past the end has no data but the real total. */
  async page (guildId: string, page: number, limit: number): Promise<LeaderboardPage> {
    const k = this.keys.guild(guildId)
    const start = (page - 1) * limit
    const reply = await this.redis.leaderboardPage(k.board, k.names, k.settings, start, start + limit - 1)
    const curve = curveOf(reply[1])
    const data: LeaderboardEntry[] = []
    for (let i = 2; i + 2 < reply.length; i += 3) {
      const userId = String(reply[i])
      const xp = Number(reply[i + 1])
      data.push({ rank: start + data.length + 1, user_id: userId, username: usernameOf(reply[i + 2], userId), level: levelForXp(curve, xp), xp })
    }
    return { data, total: Number(reply[0]), page }
  }

  async member (guildId: string, userId: string): Promise<MemberRecord> {
    const k = this.keys.guild(guildId)
    const reply = await this.redis.member(k.board, k.names, k.streaks, k.claims, k.settings, boardMember(userId), userId)
    if (reply === null) throw new MemberNotFoundError(guildId, userId)
    const [xpReply, rank, username, streak, lastClaim, curve, now] = reply
    const xp = Number(xpReply)
    const claimedAt = lastClaim === null || lastClaim === undefined ? null : Number(lastClaim)
    return {
      user_id: userId,
      username: usernameOf(username, userId),
      level: levelForXp(curveOf(curve), xp),
      xp,
      rank: Number(rank) + 1,
      daily_streak: currentStreak(Number(streak ?? 0), claimedAt, Number(now)),
      last_daily_claim: claimedAt === null ? null : new Date(claimedAt).toISOString()
    }
  }

  async stats (guildId: string): Promise<GuildStats> {
    const k = this.keys.guild(guildId)
    const [curve, hundredths, xpTotal, membersWithXp, levelSum] =
      await this.redis.guildStats(k.stats, k.settings, DEFAULT_CURVE)
    return {
      total_members: Number(membersWithXp ?? 0),
      total_xp: Number(xpTotal ?? 0),
      average_level: averageRoundedHalfUp(BigInt(levelSum ?? 0), BigInt(membersWithXp ?? 0)),
      xp_curve: curveOf(curve),
      xp_multiplier: formatMultiplier(Number(hundredths ?? DEFAULT_MULTIPLIER_HUNDREDTHS))
    }
  }
}

/** The stored streak while it is alive (last claim today or yesterday, UTC), else 0. */
export function currentStreak (stored: number, lastClaimMs: number | null, nowMs: number): number {
  if (lastClaimMs === null) return 0
  const daysSince = Math.floor(nowMs / DAY_MS) - Math.floor(lastClaimMs / DAY_MS)
  return daysSince <= 1 ? stored : 0
}
