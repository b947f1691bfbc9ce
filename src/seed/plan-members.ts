// The crowd a seed describes, planned without writing anything: ids, names, a long-tailed XP
// spread with deliberate ties, daily claims, and the part of some members' XP earned this week.
import { Random } from '../random.js'
import { MAX_AWARD } from '../validation.js'
import { claimsFor } from './daily-claims.js'
import { drawCreation, drawLowBits, redrawRepeatedIds, spellSnowflake } from './snowflakes.js'
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

/** Members with recent XP at most: each is one award call when the crowd is written. */
export const MAX_RECENT_MEMBERS = 2000

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
    plan[i] = { userId: '', username: uniqueUsername(rng, names), xp: xpFor(rng), claims: claimsFor(rng, opts.now), recentXp: 0 }
  }
  redrawRepeatedIds(rng, since, low)
  for (let i = 0; i < count; i++) (plan[i] as PlannedMember).userId = spellSnowflake(since[i] as number, low[i] as number)
  addTies(rng, plan)
  addRecentXp(opts.seed, plan)
  return plan
}

/**
 * About two in five members with XP earned part of it this week: a few dozen to a few hundred XP.
 * Drawn from a generator of its own, so the rest of the crowd is what the seed gave before.
 */
function addRecentXp (seed: string, plan: PlannedMember[]): void {
  const rng = new Random(`${seed}:recent`)
  let given = 0
  for (const m of plan) {
    if (given === MAX_RECENT_MEMBERS) return
    if (m.xp === 0 || !rng.chance(0.4)) continue
    m.recentXp = Math.min(m.xp, MAX_AWARD, Math.max(1, Math.round(Math.exp(Math.log(120) + rng.normal()))))
    given++
  }
}

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
