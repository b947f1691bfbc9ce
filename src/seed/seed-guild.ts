// Fills a server with a realistic crowd (planned in ./plan-members.ts) through the writer library
// alone: the bulk write path for the crowd, the award path for the XP earned this week, so the
// period boards have it. The same seed on the same UTC day gives the same crowd.
import { randomBytes } from 'node:crypto'
import { redisNow } from '../redis/client.js'
import type { Curve } from '../levels/curves.js'
import { assertInteger, assertSnowflake } from '../validation.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { currentStreak } from '../reader/leaderboard-reader.js'
import { dailyRecord } from './daily-claims.js'
import { type PlannedMember, planMembers } from './plan-members.js'

export const MAX_SEED_MEMBERS = 1_000_000
/** Members per bulk write call while seeding (the writer batches them further). */
const SEED_CHUNK = 25_000
/** Award calls in flight at once: auto-pipelined, a few hundred go out together. */
const AWARDS_AT_ONCE = 250

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

/** Seeds through the bulk write path: members in batches, each with its final daily record. */
export async function seedGuild (writer: LeaderboardWriter, opts: SeedGuildOptions): Promise<SeedSummary> {
  const started = performance.now()
  const guildId = assertSnowflake('guild_id', opts.guildId)
  const total = assertInteger('members', opts.members, 1, MAX_SEED_MEMBERS)
  const seed = opts.seed === undefined ? randomBytes(6).toString('hex') : String(opts.seed)
  if (opts.curve !== undefined) await writer.configureGuild(guildId, { curve: opts.curve })
  const now = opts.now ?? await redisNow(writer.redis)
  const plan = planMembers({ members: total, seed, now })

  // In chunks, the next one checked and encoded while the one before is written: one call for
  // the whole crowd would check a million members before writing any, with Redis idle meanwhile.
  let written = 0
  let writing: Promise<unknown> = Promise.resolve()
  for (let from = 0; from < total; from += SEED_CHUNK) {
    let chunkDone = 0
    const chunk = writer.bulkSetMembers(guildId, plan.slice(from, from + SEED_CHUNK).map((m) => ({
      userId: m.userId, xp: m.xp - m.recentXp, username: m.username, daily: dailyRecord(m.claims)
    })), (done) => {
      written += done - chunkDone
      chunkDone = done
      opts.onProgress?.(written, total)
    })
    chunk.catch(() => {}) // awaited below; meanwhile a failure must not count as unhandled
    await writing
    writing = chunk
  }
  await writing
  const recent = await awardRecentXp(writer, guildId, plan)

  const claimed = plan.filter((m) => m.claims.length > 0)
  // The reader's own rule for a streak that still counts, so the summary says what the API shows.
  const activeStreaks = claimed.filter((m) => currentStreak(1, m.claims.at(-1) ?? null, now) > 0).length
  return {
    guildId,
    members: total,
    totalXp: plan.reduce((sum, m) => sum + m.xp, 0),
    zeroXp: plan.filter((m) => m.xp === 0).length,
    tied: countTied(plan),
    activeStreaks,
    brokenStreaks: claimed.length - activeStreaks,
    recent,
    seed,
    elapsedMs: performance.now() - started
  }
}

function countTied (plan: PlannedMember[]): number {
  const counts = new Map<number, number>()
  for (const { xp } of plan) if (xp > 0) counts.set(xp, (counts.get(xp) ?? 0) + 1)
  let tied = 0
  for (const count of counts.values()) if (count > 1) tied += count
  return tied
}

/**
 * The recent part of members' XP through awardXp, which counts it into this week's and month's
 * boards as it does a bot's awards. Returns how many members were awarded.
 */
async function awardRecentXp (writer: LeaderboardWriter, guildId: string, plan: PlannedMember[]): Promise<number> {
  const recent = plan.filter((m) => m.recentXp > 0)
  for (let i = 0; i < recent.length; i += AWARDS_AT_ONCE) {
    await Promise.all(recent.slice(i, i + AWARDS_AT_ONCE).map(async (m) => {
      const { xp } = await writer.awardXp({ guildId, userId: m.userId, xp: m.recentXp })
      m.xp = xp // as planned, unless the server has a multiplier
    }))
  }
  return recent.length
}
