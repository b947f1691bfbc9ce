// Fills a server with a realistic crowd through the writer library alone: snowflake ids,
// plausible usernames, a long-tailed XP spread with deliberate ties, and daily streaks that are
// current, broken or restarted. The same seed on the same UTC day gives the same crowd.
import { randomBytes } from 'node:crypto'
import { redisNow } from '../redis/client.js'
import { DailyClaimRefusedError } from '../errors.js'
import type { Curve } from '../levels/curves.js'
import { assertInteger, assertSnowflake } from '../validation.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { currentStreak } from '../reader/leaderboard-reader.js'
import { Random } from '../random.js'

export const MAX_SEED_MEMBERS = 1_000_000
/** ioredis pipelines concurrent commands on one connection; this many keeps Redis busy. */
export const DEFAULT_SEED_CONCURRENCY = 1000
const DAY_MS = 86_400_000

export interface SeedGuildOptions {
  guildId: string
  members: number
  /** Also configures the server's curve; left as it is when absent. */
  curve?: Curve
  /** Seed of the random generator; a random one when absent (the summary says which). */
  seed?: string | number
  /** Reference time in Unix ms (default: Redis's clock). Current streaks end on its UTC day or the day before. */
  now?: number
  /** Writer calls in flight at once (one per member being written). */
  concurrency?: number
  onProgress?: (done: number, total: number) => void
}

export interface SeedSummary {
  guildId: string
  /** Members written. Seeding adds to a board; members already there stay. */
  members: number
  /** Writer calls made. */
  writes: number
  totalXp: number
  zeroXp: number
  /** Members whose XP equals another seeded member's non-zero XP. */
  tied: number
  /** Members whose last claim was today or yesterday (UTC), so their streak counts. */
  activeStreaks: number
  /** Members who claimed, but not since the day before yesterday. */
  brokenStreaks: number
  /** Claims the writer refused (only when seeding over members who already claimed). */
  refusedClaims: number
  seed: string
  elapsedMs: number
}

export interface PlannedMember {
  userId: string
  username: string
  xp: number
  /** Claim times in Unix ms, oldest first, at most one per UTC day. */
  claims: number[]
}

export async function seedGuild (writer: LeaderboardWriter, opts: SeedGuildOptions): Promise<SeedSummary> {
  const started = performance.now()
  const guildId = assertSnowflake('guild_id', opts.guildId)
  const total = assertInteger('members', opts.members, 1, MAX_SEED_MEMBERS)
  const concurrency = assertInteger('concurrency', opts.concurrency ?? DEFAULT_SEED_CONCURRENCY, 1, 100_000)
  const seed = opts.seed === undefined ? randomBytes(6).toString('hex') : String(opts.seed)
  if (opts.curve !== undefined) await writer.configureGuild(guildId, { curve: opts.curve })
  const now = opts.now ?? await redisNow(writer.redis)
  const plan = planMembers({ members: total, seed, now })

  const step = Math.max(1, Math.floor(total / 200))
  let next = 0
  let done = 0
  let writes = 0
  let refusedClaims = 0
  let failure: unknown
  const work = async (): Promise<void> => {
    while (next < plan.length) {
      // Another worker failed: the seed is lost anyway, stop adding to it.
      if (failure !== undefined) return
      const m = plan[next++] as PlannedMember
      await writer.setXp({ guildId, userId: m.userId, xp: m.xp, username: m.username })
      writes++
      // One member's claims go one after another: each depends on the one before.
      for (const at of m.claims) {
        writes++
        try {
          await writer.claimDaily({ guildId, userId: m.userId, at: new Date(at) })
        } catch (err) {
          if (!(err instanceof DailyClaimRefusedError)) throw err
          refusedClaims++
          break
        }
      }
      done++
      if (done % step === 0 || done === total) opts.onProgress?.(done, total)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, total) }, async () => {
    try {
      await work()
    } catch (err) {
      failure ??= err
    }
  }))
  if (failure !== undefined) throw failure

  const claimed = plan.filter((m) => m.claims.length > 0)
  // The reader's own rule for a streak that still counts, so the summary says what the API shows.
  const activeStreaks = claimed.filter((m) => currentStreak(1, m.claims.at(-1) ?? null, now) > 0).length
  return {
    guildId,
    members: total,
    writes,
    totalXp: plan.reduce((sum, m) => sum + m.xp, 0),
    zeroXp: plan.filter((m) => m.xp === 0).length,
    tied: countTied(plan),
    activeStreaks,
    brokenStreaks: claimed.length - activeStreaks,
    refusedClaims,
    seed,
    elapsedMs: performance.now() - started
  }
}

/** The crowd `seedGuild` writes, without writing it. Pure: same input, same crowd. */
export function planMembers (opts: { members: number, seed: string, now: number }): PlannedMember[] {
  const rng = new Random(opts.seed)
  const ids = new Set<string>()
  const names = new Set<string>()
  const plan: PlannedMember[] = []
  for (let i = 0; i < opts.members; i++) {
    let userId = snowflake(rng)
    while (ids.has(userId)) userId = snowflake(rng)
    ids.add(userId)
    plan.push({ userId, username: uniqueUsername(rng, names), xp: xpFor(rng), claims: claimsFor(rng, opts.now) })
  }
  addTies(rng, plan)
  return plan
}

function countTied (plan: PlannedMember[]): number {
  const counts = new Map<number, number>()
  for (const { xp } of plan) if (xp > 0) counts.set(xp, (counts.get(xp) ?? 0) + 1)
  let tied = 0
  for (const count of counts.values()) if (count > 1) tied += count
  return tied
}

// --- XP -------------------------------------------------------------------------------------

/** Lurkers at 0, a log-normal body (median a few hundred XP) and a thin tail in the millions. */
function xpFor (rng: Random): number {
  if (rng.chance(0.12)) return 0
  const xp = Math.round(Math.exp(Math.log(350) + 2 * rng.normal()))
  return Math.min(Math.max(xp, 1), 100_000_000)
}

/**
 * Ties the contract's ordering has to settle: one pair just below the top of the board, where
 * the demo shows it, and about one small group per 150 members further down.
 */
function addTies (rng: Random, plan: PlannedMember[]): void {
  const active = plan.filter((m) => m.xp > 0)
  if (active.length < 2) return
  const byXp = [...active].sort((a, b) => b.xp - a.xp)
  const anchor = byXp[Math.min(2, byXp.length - 2)] as PlannedMember
  const follower = byXp[Math.min(3, byXp.length - 1)] as PlannedMember
  follower.xp = anchor.xp
  const groups = Math.floor(plan.length / 150)
  for (let g = 0; g < groups; g++) {
    const leader = rng.pick(active)
    const size = rng.chance(0.7) ? 2 : rng.int(3, 5)
    for (let i = 1; i < size; i++) rng.pick(active).xp = leader.xp
  }
}

// --- Daily claims ---------------------------------------------------------------------------

/**
 * About a third of members have claimed: most of them have a streak that still counts (ending
 * today or yesterday, now and then after an older run that broke), the rest stopped a while ago.
 * Only the last run can show through the API, so older history is kept short: every claim is a
 * write, and the claims are most of the seed's writes.
 */
function claimsFor (rng: Random, now: number): number[] {
  if (!rng.chance(0.3)) return []
  const today = Math.floor(now / DAY_MS)
  const days: number[] = []
  const run = (end: number, length: number): void => {
    for (let d = end - length + 1; d <= end; d++) days.push(d)
  }
  if (rng.chance(0.55)) {
    const end = rng.chance(0.6) ? today : today - 1
    const length = streakLength(rng)
    if (rng.chance(0.1)) run(end - length - rng.int(2, 14), rng.int(1, 3))
    run(end, length)
  } else {
    // A broken run still stores its streak; the API must show 0 for it all the same.
    run(today - rng.int(2, 90), rng.chance(0.7) ? 1 : rng.int(2, 6))
  }
  return days.map((day) => {
    const start = day * DAY_MS
    // A claim today must not be dated after the clock, or the writer refuses it.
    const span = day === today ? Math.max(1, now - start) : DAY_MS
    return start + Math.floor(rng.next() * span)
  })
}

/** Mostly a few days; now and then someone who has not missed a day in months. */
function streakLength (rng: Random): number {
  if (rng.chance(0.015)) return rng.int(20, 100)
  let length = 1
  while (length < 19 && rng.chance(0.6)) length++
  return length
}

// --- Identities -----------------------------------------------------------------------------

const DISCORD_EPOCH = 1_420_070_400_000n
const FIRST_ACCOUNT_MS = Date.UTC(2015, 4, 13)
// Fixed, not "now", so that a seed gives the same ids whatever the day.
const LAST_ACCOUNT_MS = Date.UTC(2025, 0, 1)

/** A Discord-style snowflake: account creation time, worker, process and increment bits. */
function snowflake (rng: Random): string {
  // Newer accounts outnumber older ones.
  const created = FIRST_ACCOUNT_MS + Math.floor((LAST_ACCOUNT_MS - FIRST_ACCOUNT_MS) * rng.next() ** 0.6)
  const id = ((BigInt(created) - DISCORD_EPOCH) << 22n) |
    (BigInt(rng.int(0, 1)) << 17n) | (BigInt(rng.int(0, 31)) << 12n) | BigInt(rng.int(0, 4095))
  return id.toString()
}

const ADJECTIVES = [
  'quiet', 'sleepy', 'lucky', 'salty', 'cosmic', 'fuzzy', 'silent', 'rusty', 'neon', 'frozen',
  'golden', 'sneaky', 'wild', 'lazy', 'brave', 'tiny', 'dark', 'crispy', 'mighty', 'shy',
  'electric', 'spicy', 'hollow', 'crimson', 'pixel', 'velvet', 'grumpy', 'swift', 'lost', 'happy',
  'ancient', 'feral', 'stormy', 'sunny', 'glitchy', 'toasty', 'mellow', 'wobbly', 'noble', 'odd'
]
const NOUNS = [
  'otter', 'fox', 'panda', 'wolf', 'raven', 'goblin', 'waffle', 'noodle', 'comet', 'badger',
  'dragon', 'pickle', 'falcon', 'lynx', 'moth', 'ghost', 'knight', 'potato', 'wizard', 'cactus',
  'tiger', 'muffin', 'penguin', 'phoenix', 'toast', 'sloth', 'viking', 'kraken', 'bean', 'hamster',
  'ninja', 'pirate', 'robot', 'llama', 'spark', 'koala', 'turnip', 'yeti', 'mango', 'owl'
]
const FIRST_NAMES = [
  'emma', 'lukas', 'mia', 'noah', 'sofia', 'liam', 'lena', 'mateo', 'chloe', 'kai', 'yuki', 'omar',
  'ava', 'jonas', 'nina', 'leo', 'hana', 'felix', 'zoe', 'arjun', 'sara', 'theo', 'ines', 'ravi',
  'maja', 'ethan', 'lucia', 'finn', 'amir', 'elif', 'jack', 'aiko', 'tom', 'nora', 'diego', 'ida'
]
const FLAIR = ['✨', '🌙', '🔥', '🎮', '🍀', '⚡']

const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

function username (rng: Random): string {
  const adjective = rng.pick(ADJECTIVES)
  const noun = rng.pick(NOUNS)
  const first = rng.pick(FIRST_NAMES)
  const roll = rng.next()
  if (roll < 0.22) return adjective + noun
  if (roll < 0.40) return `${adjective}_${noun}${rng.int(1, 99)}`
  if (roll < 0.55) return `${first}${rng.chance(0.5) ? rng.int(1985, 2011) : rng.int(1, 999)}`
  if (roll < 0.65) return `${first}.${noun}`
  if (roll < 0.75) return capital(adjective) + capital(noun)
  if (roll < 0.83) return `${capital(adjective)} ${capital(noun)}`
  if (roll < 0.90) return `${noun}_${rng.int(100, 9999)}`
  if (roll < 0.95) return `${capital(first)} ${rng.pick(FLAIR)}`
  if (roll < 0.98) return `xX_${adjective}${noun}_Xx`
  // Display names are not only ASCII.
  return rng.pick(['Zoë', 'Björn', 'Chloé', 'Søren', 'Łukasz', 'José', 'Naïa', 'Renée'])
}

/** Display names need not be unique, but a crowd of clones would not look real. */
function uniqueUsername (rng: Random, taken: Set<string>): string {
  let name = username(rng)
  for (let attempt = 0; taken.has(name) && attempt < 3; attempt++) name = username(rng)
  while (taken.has(name)) name = `${name}${rng.int(0, 9)}`
  taken.add(name)
  return name
}
