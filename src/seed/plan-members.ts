// The crowd a seed describes, planned without writing anything: ids, names, a long-tailed XP
// spread with deliberate ties, daily claims, and the part of some members' XP earned this week.
// A crowd is drawn twice from its seed: once to settle what depends on the whole crowd (ids
// distinct, ties placed), keeping only the ids and XP in typed arrays, then again member by member
// as it is consumed, so that a seed of any size never holds its members.
import { Random } from '../random.js'
import { MAX_AWARD } from '../validation.js'
import { claimsFor } from './daily-claims.js'
import { drawCreation, drawLowBits, idDouble, redrawRepeatedIds, spellSnowflake } from './snowflakes.js'
import { uniqueUsername, USERNAME_CODES } from './usernames.js'

export interface PlannedMember {
  userId: string
  username: string
  xp: number
  /** Claim times in Unix ms, oldest first, at most one per UTC day. */
  claims: number[]
  /**
   * The part of `xp` earned in the current week and month (0 for most): written as an award,
   * so that the period boards (`?period=week`, `month`) show it as a bot's awards would.
   */
  recentXp: number
}

/** Members with recent XP at most: each is one award when the crowd is written. */
export const MAX_RECENT_MEMBERS = 2000

export interface PlanOptions {
  members: number
  seed: string
  /** Reference time in Unix ms: current streaks end on its UTC day or the day before. */
  now: number
}

/** What one member draws from the seed's generator, in the order the seed fixes. */
interface Draw {
  since: number
  low: number
  username: string
  xp: number
  claims: number[]
}

/** The seed's generator and the names taken so far: both passes draw the same members through it. */
class Draws {
  readonly rng: Random
  readonly #names = new Uint32Array(USERNAME_CODES)
  readonly #now: number

  constructor (seed: string, now: number) {
    this.rng = new Random(seed)
    this.#now = now
  }

  next (): Draw {
    const rng = this.rng
    const since = drawCreation(rng)
    const low = drawLowBits(rng)
    return { since, low, username: uniqueUsername(rng, this.#names), xp: xpFor(rng), claims: claimsFor(rng, this.#now) }
  }
}

/** Each member's id (ms since the Discord epoch, and the low 22 bits), once some had to be drawn again. */
interface RedrawnIds {
  since: Float64Array
  low: Uint32Array
}

/**
 * The crowd `seedGuild` writes, without writing it. Pure: same options, same crowd. Iterating
 * it draws the members one by one, in plan order; what it holds is the XP of the members who
 * have some (4 bytes each; 12 while it is planned), never the members themselves.
 */
export class CrowdPlan implements Iterable<PlannedMember> {
  readonly members: number
  readonly #options: PlanOptions
  /** The XP of each member who has some, in plan order, ties placed. */
  readonly #xp: Uint32Array
  /** Undefined while every id is the one first drawn (nearly always). */
  readonly #ids: RedrawnIds | undefined

  constructor (options: PlanOptions) {
    this.#options = options
    const count = this.members = options.members
    const draws = new Draws(options.seed, options.now)
    const ids = new Float64Array(count)
    const xp = new Uint32Array(count)
    let active = 0
    for (let i = 0; i < count; i++) {
      const d = draws.next()
      ids[i] = idDouble(d.since, d.low)
      if (d.xp > 0) xp[active++] = d.xp
    }
    // Distinct doubles are distinct ids. Where two meet (a crowd of a million in a thousand or
    // so), the ids are drawn again to be compared exactly, and repeats drawn anew.
    this.#ids = hasEqualNeighbours(ids.sort()) ? redrawIds(options, draws.rng) : undefined
    this.#xp = xp.subarray(0, active)
    addTies(draws.rng, this.#xp, count)
  }

  /** Members at 0 XP. */
  get zeroXp (): number {
    return this.members - this.#xp.length
  }

  /**
   * Members whose XP equals another member's non-zero XP, once `changed` ([XP as planned, XP
   * now] for members whose XP moved since, as an award under a multiplier moves it) is applied.
   */
  tied (changed: ReadonlyArray<readonly [number, number]> = []): number {
    const xps = new Float64Array(this.#xp)
    if (changed.length > 0) {
      // Ties are counted by value, so any member planned at `from` may stand for the one that moved.
      const moves = new Map<number, number[]>()
      for (const [from, to] of changed) {
        const tos = moves.get(from)
        if (tos === undefined) moves.set(from, [to])
        else tos.push(to)
      }
      for (let i = 0; i < xps.length; i++) {
        const to = moves.get(xps[i] as number)?.pop()
        if (to !== undefined) xps[i] = to
      }
    }
    xps.sort()
    let tied = 0
    for (let start = 0, i = 1; i <= xps.length; i++) {
      if (i < xps.length && xps[i] === xps[start]) continue
      if (i - start > 1) tied += i - start
      start = i
    }
    return tied
  }

  * [Symbol.iterator] (): Iterator<PlannedMember> {
    const { seed, now } = this.#options
    // The same draws again, for the names and claims, with the XP (and ids) settled above.
    const draws = new Draws(seed, now)
    const recent = new Random(`${seed}:recent`)
    let active = 0
    let given = 0
    for (let i = 0; i < this.members; i++) {
      const d = draws.next()
      const xp = d.xp === 0 ? 0 : this.#xp[active++] as number
      let recentXp = 0
      // About two in five members with XP earned part of it this week: a few dozen to a few
      // hundred XP, drawn from a generator of its own.
      if (given < MAX_RECENT_MEMBERS && xp > 0 && recent.chance(0.4)) {
        recentXp = Math.min(xp, MAX_AWARD, Math.max(1, Math.round(Math.exp(Math.log(120) + recent.normal()))))
        given++
      }
      const ids = this.#ids
      const userId = ids === undefined ? spellSnowflake(d.since, d.low) : spellSnowflake(ids.since[i] as number, ids.low[i] as number)
      yield { userId, username: d.username, xp, claims: d.claims, recentXp }
    }
  }
}

/** Every planned member at once: for a few thousand (tests, a look at a seed), not a million. */
export function planMembers (options: PlanOptions): PlannedMember[] {
  return [...new CrowdPlan(options)]
}

function hasEqualNeighbours (sorted: Float64Array): boolean {
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return true
  return false
}

/** Every member's id, repeats drawn again from `rng` (the plan's generator, where the first draws left it). */
function redrawIds ({ members, seed, now }: PlanOptions, rng: Random): RedrawnIds {
  const since = new Float64Array(members)
  const low = new Uint32Array(members)
  const draws = new Draws(seed, now)
  for (let i = 0; i < members; i++) {
    const d = draws.next()
    since[i] = d.since
    low[i] = d.low
  }
  redrawRepeatedIds(rng, since, low)
  return { since, low }
}

/** Lurkers at 0, a log-normal body (median a few hundred XP) and a thin tail in the millions. */
function xpFor (rng: Random): number {
  if (rng.chance(0.12)) return 0
  const xp = Math.round(Math.exp(Math.log(350) + 2 * rng.normal()))
  return Math.min(Math.max(xp, 1), 100_000_000)
}

/**
 * Ties the contract's ordering has to settle, in `xp` (the members with XP, in plan order): one
 * pair just below the top of the board, where the demo shows it, and about one small group per
 * 150 members of the crowd further down.
 */
function addTies (rng: Random, xp: Uint32Array, members: number): void {
  const active = xp.length
  if (active < 2) return
  const byXp = topByXp(xp, 4)
  const anchor = byXp[Math.min(2, byXp.length - 2)] as number
  const follower = byXp[Math.min(3, byXp.length - 1)] as number
  xp[follower] = xp[anchor] as number
  const groups = Math.floor(members / 150)
  for (let g = 0; g < groups; g++) {
    const leader = rng.index(active)
    const size = rng.chance(0.7) ? 2 : rng.int(3, 5)
    for (let i = 1; i < size; i++) xp[rng.index(active)] = xp[leader] as number
  }
}

/** Indexes of the first `count` values by value descending, in order among equals (a stable sort's head, without sorting them all). */
function topByXp (xp: Uint32Array, count: number): number[] {
  const top: number[] = []
  for (let i = 0; i < xp.length; i++) {
    const value = xp[i] as number
    if (top.length === count && value <= (xp[top[count - 1] as number] as number)) continue
    let at = top.length
    while (at > 0 && (xp[top[at - 1] as number] as number) < value) at--
    top.splice(at, 0, i)
    if (top.length > count) top.pop()
  }
  return top
}
