// Fills a server with a realistic crowd through the writer library alone: snowflake ids,
// plausible usernames, a long-tailed XP spread with deliberate ties, and daily streaks that are
// current, broken or restarted. The same seed on the same UTC day gives the same crowd.
import { randomBytes } from 'node:crypto'
import { redisNow } from '../redis/client.js'
import type { Curve } from '../levels/curves.js'
import { assertInteger, assertSnowflake } from '../validation.js'
import type { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { currentStreak } from '../reader/leaderboard-reader.js'
import { Random } from '../random.js'

export const MAX_SEED_MEMBERS = 1_000_000
/** Members per bulk write call while seeding (the writer batches them further). */
const SEED_CHUNK = 25_000
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
      userId: m.userId, xp: m.xp, username: m.username, daily: dailyRecord(m.claims)
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
    seed,
    elapsedMs: performance.now() - started
  }
}

/** The record a member's claims leave behind, as the daily-claim script would have kept it. */
export function dailyRecord (claims: number[]): { streak: number, lastClaim: Date } | undefined {
  let streak = 0
  let lastDay = NaN
  for (const at of claims) {
    const day = Math.floor(at / DAY_MS)
    streak = day === lastDay + 1 ? streak + 1 : 1
    lastDay = day
  }
  const last = claims.at(-1)
  return last === undefined ? undefined : { streak, lastClaim: new Date(last) }
}

/** The crowd `seedGuild` writes, without writing it. Pure: same input, same crowd. */
export function planMembers (opts: { members: number, seed: string, now: number }): PlannedMember[] {
  const rng = new Random(opts.seed)
  const count = opts.members
  const names = new Uint32Array(USERNAME_CODES)
  const since = new Float64Array(count)
  const low = new Float64Array(count)
  const plan: PlannedMember[] = new Array(count)
  for (let i = 0; i < count; i++) {
    since[i] = drawCreation(rng)
    low[i] = drawLowBits(rng)
    plan[i] = { userId: '', username: uniqueUsername(rng, names), xp: xpFor(rng), claims: claimsFor(rng, opts.now) }
  }
  redrawRepeatedIds(rng, since, low)
  for (let i = 0; i < count; i++) (plan[i] as PlannedMember).userId = spellSnowflake(since[i] as number, low[i] as number)
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
  const byXp = topByXp(active, 4)
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

/** The first `count` members by XP descending, in plan order among equals (a stable sort's head, without sorting them all). */
function topByXp (members: PlannedMember[], count: number): PlannedMember[] {
  const top: PlannedMember[] = []
  for (const m of members) {
    if (top.length === count && m.xp <= (top[count - 1] as PlannedMember).xp) continue
    let at = top.length
    while (at > 0 && (top[at - 1] as PlannedMember).xp < m.xp) at--
    top.splice(at, 0, m)
    if (top.length > count) top.pop()
  }
  return top
}

// --- Daily claims ---------------------------------------------------------------------------

/**
 * About a third of members have claimed: most of them have a streak that still counts (ending
 * today or yesterday, now and then after an older run that broke), the rest stopped a while ago.
 * Only the last run can show through the API, so older history is kept short.
 */
function claimsFor (rng: Random, now: number): number[] {
  if (!rng.chance(0.3)) return []
  const today = Math.floor(now / DAY_MS)
  const days: number[] = []
  if (rng.chance(0.55)) {
    const end = rng.chance(0.6) ? today : today - 1
    const length = streakLength(rng)
    if (rng.chance(0.1)) addRun(days, end - length - rng.int(2, 14), rng.int(1, 3))
    addRun(days, end, length)
  } else {
    // A broken run still stores its streak; the API must show 0 for it all the same.
    addRun(days, today - rng.int(2, 90), rng.chance(0.7) ? 1 : rng.int(2, 6))
  }
  const claims: number[] = new Array(days.length)
  for (let i = 0; i < days.length; i++) {
    const start = (days[i] as number) * DAY_MS
    // A claim today must not be dated after the clock, or the writer refuses it.
    const span = days[i] === today ? Math.max(1, now - start) : DAY_MS
    claims[i] = start + Math.floor(rng.next() * span)
  }
  return claims
}

function addRun (days: number[], end: number, length: number): void {
  for (let d = end - length + 1; d <= end; d++) days.push(d)
}

/** Mostly a few days; now and then someone who has not missed a day in months. */
function streakLength (rng: Random): number {
  if (rng.chance(0.015)) return rng.int(20, 100)
  let length = 1
  while (length < 19 && rng.chance(0.6)) length++
  return length
}

// --- Identities -----------------------------------------------------------------------------

const DISCORD_EPOCH_MS = 1_420_070_400_000
const BILLION = 1_000_000_000
const FIRST_ACCOUNT_MS = Date.UTC(2015, 4, 13)
// Fixed, not "now", so that a seed gives the same ids whatever the day.
const LAST_ACCOUNT_MS = Date.UTC(2025, 0, 1)

// A Discord-style snowflake: account creation time, then worker, process and increment bits.
// It is drawn as two numbers (ms since the Discord epoch, and the low 22 bits) and spelled once.

/** Ms since the Discord epoch of an account's creation: newer accounts outnumber older ones. */
function drawCreation (rng: Random): number {
  return FIRST_ACCOUNT_MS - DISCORD_EPOCH_MS + Math.floor((LAST_ACCOUNT_MS - FIRST_ACCOUNT_MS) * rng.next() ** 0.6)
}

function drawLowBits (rng: Random): number {
  return rng.int(0, 1) * 131_072 + rng.int(0, 31) * 4096 + rng.int(0, 4095)
}

/** since * 2^22 + low in decimal. It is past 2^53, so it is written out in two exact halves of base 10^9 (BigInt costs more than planning the rest of a member). */
function spellSnowflake (since: number, low: number): string {
  const upper = Math.floor(since / BILLION)
  const lower = (since - upper * BILLION) * 4_194_304 + low // < 2^52: exact
  let carry = Math.floor(lower / BILLION)
  if (carry * BILLION > lower) carry-- // the division may round up by one ulp
  const high = upper * 4_194_304 + carry
  const rest = String(lower - carry * BILLION)
  return high === 0 ? rest : String(high) + '000000000'.slice(rest.length) + rest
}

/**
 * Ids that are drawn twice get drawn again, in plan order, until every id is distinct. A Set of a
 * million id strings costs more than planning the crowd, so the ids are sorted as doubles
 * (since * 2^22 + low, rounded past 2^53: equal ids have equal doubles), and only ids whose
 * doubles meet are compared exactly.
 */
function redrawRepeatedIds (rng: Random, since: Float64Array, low: Float64Array): void {
  const n = since.length
  const value = new Float64Array(n)
  for (;;) {
    for (let i = 0; i < n; i++) value[i] = (since[i] as number) * 4_194_304 + (low[i] as number)
    const sorted = value.slice().sort()
    const close = new Set<number>()
    for (let k = 1; k < n; k++) if (sorted[k] === sorted[k - 1]) close.add(sorted[k] as number)
    if (close.size === 0) return
    // Seldom reached: the first holder of an id keeps it, the others draw again.
    const seen = new Set<string>()
    let redrawn = 0
    for (let i = 0; i < n; i++) {
      if (!close.has(value[i] as number)) continue
      const id = `${since[i] as number}:${low[i] as number}`
      if (!seen.has(id)) {
        seen.add(id)
        continue
      }
      since[i] = drawCreation(rng)
      low[i] = drawLowBits(rng)
      redrawn++
    }
    if (redrawn === 0) return
  }
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

const SPECIAL = ['Zoë', 'Björn', 'Chloé', 'Søren', 'Łukasz', 'José', 'Naïa', 'Renée']

const capital = (word: string): string => word.charAt(0).toUpperCase() + word.slice(1)

// A username is drawn as a number, its code, and spelled once it is known to be free, so that
// repeats in a crowd of a million are counted in an array instead of a Map of strings. Each style
// has a range of codes holding only the parts it shows: equal names have equal codes.
const PAIRS = ADJECTIVES.length * NOUNS.length
const STYLE_SIZES = [
  PAIRS, //                             0 quietotter
  PAIRS * 99, //                        1 quiet_otter42         (1 to 99)
  FIRST_NAMES.length * 2011, //         2 emma1999 or emma42    (1 to 2011)
  FIRST_NAMES.length * NOUNS.length, // 3 emma.otter
  PAIRS, //                             4 QuietOtter
  PAIRS, //                             5 Quiet Otter
  NOUNS.length * 9900, //               6 otter_1234            (100 to 9999)
  FIRST_NAMES.length * FLAIR.length, // 7 Emma ✨
  PAIRS, //                             8 xX_quietotter_Xx
  SPECIAL.length //                     9 Zoë
]
const STYLE_START = STYLE_SIZES.map((_, i) => STYLE_SIZES.slice(0, i).reduce((a, b) => a + b, 0))
const USERNAME_CODES = STYLE_START.at(-1) as number + (STYLE_SIZES.at(-1) as number)

function usernameCode (rng: Random): number {
  const adjective = Math.floor(rng.next() * ADJECTIVES.length)
  const noun = Math.floor(rng.next() * NOUNS.length)
  const first = Math.floor(rng.next() * FIRST_NAMES.length)
  const pair = adjective * NOUNS.length + noun
  const roll = rng.next()
  let style: number
  let index: number
  if (roll < 0.22) [style, index] = [0, pair]
  else if (roll < 0.40) [style, index] = [1, pair * 99 + rng.int(1, 99) - 1]
  else if (roll < 0.55) [style, index] = [2, first * 2011 + (rng.chance(0.5) ? rng.int(1985, 2011) : rng.int(1, 999)) - 1]
  else if (roll < 0.65) [style, index] = [3, first * NOUNS.length + noun]
  else if (roll < 0.75) [style, index] = [4, pair]
  else if (roll < 0.83) [style, index] = [5, pair]
  else if (roll < 0.90) [style, index] = [6, noun * 9900 + rng.int(100, 9999) - 100]
  else if (roll < 0.95) [style, index] = [7, first * FLAIR.length + Math.floor(rng.next() * FLAIR.length)]
  else if (roll < 0.98) [style, index] = [8, pair]
  // Display names are not only ASCII.
  else [style, index] = [9, Math.floor(rng.next() * SPECIAL.length)]
  return (STYLE_START[style] as number) + index
}

function spellUsername (code: number): string {
  let style = STYLE_START.length - 1
  while ((STYLE_START[style] as number) > code) style--
  const index = code - (STYLE_START[style] as number)
  const adjective = ADJECTIVES[Math.floor(index / NOUNS.length) % ADJECTIVES.length] as string
  const noun = NOUNS[index % NOUNS.length] as string
  switch (style) {
    case 0: return adjective + noun
    case 1: {
      const pair = Math.floor(index / 99)
      return `${ADJECTIVES[Math.floor(pair / NOUNS.length)] as string}_${NOUNS[pair % NOUNS.length] as string}${index % 99 + 1}`
    }
    case 2: return `${FIRST_NAMES[Math.floor(index / 2011)] as string}${index % 2011 + 1}`
    case 3: return `${FIRST_NAMES[Math.floor(index / NOUNS.length)] as string}.${noun}`
    case 4: return capital(adjective) + capital(noun)
    case 5: return `${capital(adjective)} ${capital(noun)}`
    case 6: return `${NOUNS[Math.floor(index / 9900)] as string}_${index % 9900 + 100}`
    case 7: return `${capital(FIRST_NAMES[Math.floor(index / FLAIR.length)] as string)} ${FLAIR[index % FLAIR.length] as string}`
    case 8: return `xX_${adjective}${noun}_Xx`
    default: return SPECIAL[index] as string
  }
}

/**
 * Display names need not be unique, but a crowd of clones would not look real. A name still
 * taken after three draws gets a number, as Discord users pick one: "<name>_<n>", n the next
 * after the last one given to that name (`taken[code]` counts its holders). No base name is
 * "<another base name>_<n>", so the numbered names are new too: every name is distinct.
 */
function uniqueUsername (rng: Random, taken: Uint32Array): string {
  let code = usernameCode(rng)
  for (let attempt = 0; (taken[code] as number) > 0 && attempt < 3; attempt++) code = usernameCode(rng)
  const holders = taken[code] as number
  taken[code] = holders + 1
  return holders === 0 ? spellUsername(code) : `${spellUsername(code)}_${holders}`
}
