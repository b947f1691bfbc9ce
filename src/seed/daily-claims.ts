// Daily claims for a seeded crowd: about a third have claimed, most with a streak that still
// counts, and the record those claims leave as the daily-claim script would have kept it.
import type { Random } from '../random.js'

const DAY_MS = 86_400_000

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

/**
 * About a third of members have claimed: most of them have a streak that still counts (ending
 * today or yesterday, now and then after an older run that broke), the rest stopped a while ago.
 * Only the last run can show through the API, so older history is kept short.
 */
export function claimsFor (rng: Random, now: number): number[] {
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
