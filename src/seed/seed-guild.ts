// Fills a server with a realistic crowd (planned in ./plan-members.ts) through the writer library
// alone: the bulk write path for the crowd, the award path for the XP earned this week, so the
// period boards have it. The same seed on the same UTC day gives the same crowd.
import { randomBytes } from 'node:crypto'
import { redisNow } from '../redis/client.js'
import type { Curve } from '../levels/curves.js'
import { assertInteger, assertSnowflake } from '../validation.js'
import { type BulkMember, type LeaderboardWriter, MAX_BATCH_AWARDS } from '../writer/leaderboard-writer.js'
import { currentStreak } from '../reader/leaderboard-reader.js'
import { dailyRecord } from './daily-claims.js'
import { CrowdPlan, type PlannedMember } from './plan-members.js'

export const MAX_SEED_MEMBERS = 1_000_000

export interface SeedGuildOptions {
  guildId: string
  members: number
  /** Also configures the server's curve; left as it is when absent. */
  curve?: Curve
  /** Seed of the random generator; a random one when absent (the summary says which). */
  seed?: string | number
  /** Reference time in Unix ms (default: Redis's clock). Current streaks end on its UTC day or the day before. */
  now?: number
  onProgress?: (done: number, total: number) => void
}

export interface SeedSummary {
  guildId: string
  /** Members written. Seeding adds to a board; members already there with the same id are overwritten. */
  members: number
  totalXp: number
  zeroXp: number
  /** Members whose XP equals another seeded member's non-zero XP. */
  tied: number
  /** Members whose last claim was today or yesterday (UTC), so their streak counts. */
  activeStreaks: number
  /** Members who claimed, but not since the day before yesterday. */
  brokenStreaks: number
  /** Members with XP in the current week and month (awarded; the rest of their XP was set). */
  recent: number
  seed: string
  elapsedMs: number
}

/**
 * Seeds through the bulk write path: the members, each with its final daily record, streamed to
 * Redis in batches as they are drawn (see CrowdPlan), then the recent XP as awards.
 */
export async function seedGuild (writer: LeaderboardWriter, opts: SeedGuildOptions): Promise<SeedSummary> {
  const started = performance.now()
  const guildId = assertSnowflake('guild_id', opts.guildId)
  const total = assertInteger('members', opts.members, 1, MAX_SEED_MEMBERS)
  const seed = opts.seed === undefined ? randomBytes(6).toString('hex') : String(opts.seed)
  if (opts.curve !== undefined) await writer.configureGuild(guildId, { curve: opts.curve })
  const now = opts.now ?? await redisNow(writer.redis)
  const plan = new CrowdPlan({ members: total, seed, now })

  let totalXp = 0
  let claimed = 0
  let activeStreaks = 0
  const recent: PlannedMember[] = [] // at most MAX_RECENT_MEMBERS
  function * members (): Generator<BulkMember> {
    for (const m of plan) {
      totalXp += m.xp
      const last = m.claims.at(-1)
      if (last !== undefined) {
        claimed++
        // The reader's own rule for a streak that still counts, so the summary says what the API shows.
        if (currentStreak(1, last, now) > 0) activeStreaks++
      }
      if (m.recentXp > 0) recent.push(m)
      yield { userId: m.userId, xp: m.xp - m.recentXp, username: m.username, daily: dailyRecord(m.claims) }
    }
  }
  await writer.bulkSetMembersFrom(guildId, members(), (done) => { opts.onProgress?.(done, total) })

  // The awards add to the XP just set, so they come after it.
  const awarded = await awardRecentXp(writer, guildId, recent)
  const moved: Array<[number, number]> = []
  recent.forEach((m, i) => {
    const xp = awarded[i] as number // as planned, unless the server has a multiplier
    if (xp !== m.xp) moved.push([m.xp, xp])
    totalXp += xp - m.xp
  })
  return {
    guildId,
    members: total,
    totalXp,
    zeroXp: plan.zeroXp,
    tied: plan.tied(moved),
    activeStreaks,
    brokenStreaks: claimed - activeStreaks,
    recent: recent.length,
    seed,
    elapsedMs: performance.now() - started
  }
}

/**
 * The recent part of members' XP as awards (awardMany, which counts it into this week's and
 * month's boards as it does a bot's awards). Returns each member's XP after its award.
 */
async function awardRecentXp (writer: LeaderboardWriter, guildId: string, recent: PlannedMember[]): Promise<number[]> {
  const xps: number[] = []
  for (let i = 0; i < recent.length; i += MAX_BATCH_AWARDS) {
    const results = await writer.awardMany(guildId, recent.slice(i, i + MAX_BATCH_AWARDS).map((m) => ({ userId: m.userId, xp: m.recentXp })))
    for (const { xp } of results) xps.push(xp)
  }
  return xps
}
