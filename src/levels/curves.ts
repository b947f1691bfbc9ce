// Level math for the three XP curves of CONTRACT.md, in exact integers. The write scripts carry
// the same formulas in Lua (src/redis/commands/includes/levels.lua); test/levels.test.ts checks
// that both agree at and around every threshold.

export const CURVES = ['mee6', 'linear', 'flat'] as const
export type Curve = typeof CURVES[number]
export const DEFAULT_CURVE: Curve = 'mee6'

/** Highest XP a member may hold. Keeps every sum and level in exact double arithmetic. */
export const MAX_XP = 1_000_000_000_000

export function isCurve (value: unknown): value is Curve {
  return typeof value === 'string' && (CURVES as readonly string[]).includes(value)
}

/** XP needed to go from level `l` to `l + 1`. */
export function xpToNextLevel (curve: Curve, l: number): number {
  switch (curve) {
    case 'mee6': return 5 * l * l + 50 * l + 100
    case 'linear': return 100 * l + 75
    case 'flat': return 1000
  }
}

/** Total XP needed to reach `level` from 0 (closed forms of the sums above). */
export function xpForLevel (curve: Curve, level: number): number {
  const L = level
  switch (curve) {
    // sum 5l^2 + 50l + 100 for l < L; (L-1)L(2L-1) is always divisible by 6
    case 'mee6': return 5 * ((L - 1) * L * (2 * L - 1) / 6) + 25 * L * (L - 1) + 100 * L
    case 'linear': return 50 * L * L + 25 * L
    case 'flat': return 1000 * L
  }
}

/** The largest level L with xpForLevel(L) <= xp. */
export function levelForXp (curve: Curve, xp: number): number {
  if (!Number.isSafeInteger(xp) || xp < 0) throw new RangeError(`xp must be a non-negative safe integer, got ${xp}`)
  let hi = 1
  while (xpForLevel(curve, hi) <= xp) hi *= 2
  let lo = hi / 2 // xpForLevel(lo) <= xp (lo = 0.5 only when hi = 1; floored below)
  lo = Math.floor(lo)
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2)
    if (xpForLevel(curve, mid) <= xp) lo = mid
    else hi = mid
  }
  return lo
}

/** Progress through the current level: XP earned within it, and the XP the level takes to complete. */
export function levelProgress (curve: Curve, xp: number): { level: number, xp: number, required: number } {
  const level = levelForXp(curve, xp)
  return { level, xp: xp - xpForLevel(curve, level), required: xpToNextLevel(curve, level) }
}
