// Level math for the three XP curves of CONTRACT.md and a server's custom curve, in exact
// integers. The write scripts carry the same formulas in Lua (src/redis/commands/includes/levels.lua);
// test/levels.test.ts checks that both agree at and around every threshold.

export const CURVES = ['mee6', 'linear', 'flat'] as const
export type Curve = typeof CURVES[number]
export const DEFAULT_CURVE: Curve = 'mee6'

/** Highest XP a member may hold. Keeps every sum and level in exact double arithmetic. */
export const MAX_XP = 1_000_000_000_000

export function isCurve (value: unknown): value is Curve {
  return typeof value === 'string' && (CURVES as readonly string[]).includes(value)
}

/**
 * A server's own curve: the XP needed for level 1, 2, … (strictly increasing, validated by the
 * settings). Its last level is the highest: no XP leads past it.
 */
export interface CustomCurve {
  readonly thresholds: readonly number[]
}

/** The curve levels are computed under: a built-in one by name, or a server's custom one. */
export type LevelCurve = Curve | CustomCurve

/** The name a curve is shown with (`xp_curve`). */
export function curveName (curve: LevelCurve): Curve | 'custom' {
  return typeof curve === 'string' ? curve : 'custom'
}

/** XP needed to go from level `l` to `l + 1`; 0 from a custom curve's last level (there is no next). */
export function xpToNextLevel (curve: LevelCurve, l: number): number {
  if (typeof curve !== 'string') {
    const t = curve.thresholds
    return l < t.length ? (t[l] as number) - (l === 0 ? 0 : t[l - 1] as number) : 0
  }
  switch (curve) {
    case 'mee6': return 5 * l * l + 50 * l + 100
    case 'linear': return 100 * l + 75
    case 'flat': return 1000
  }
}

/** Total XP needed to reach `level` from 0 (closed forms of the sums above; a custom curve's own list). */
export function xpForLevel (curve: LevelCurve, level: number): number {
  const L = level
  if (typeof curve !== 'string') {
    if (L === 0) return 0
    const xp = curve.thresholds[L - 1]
    if (xp === undefined) throw new RangeError(`the custom curve has levels 0 to ${curve.thresholds.length}, not ${L}`)
    return xp
  }
  switch (curve) {
    // sum 5l^2 + 50l + 100 for l < L; (L-1)L(2L-1) is always divisible by 6
    case 'mee6': return 5 * ((L - 1) * L * (2 * L - 1) / 6) + 25 * L * (L - 1) + 100 * L
    case 'linear': return 50 * L * L + 25 * L
    case 'flat': return 1000 * L
  }
}

/** The largest level L with xpForLevel(L) <= xp. */
export function levelForXp (curve: LevelCurve, xp: number): number {
  if (!Number.isSafeInteger(xp) || xp < 0) throw new RangeError(`xp must be a non-negative safe integer, got ${xp}`)
  if (typeof curve !== 'string') return customLevel(curve.thresholds, xp)
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

/** The number of thresholds at or below xp: a binary search of the strictly increasing list. */
function customLevel (thresholds: readonly number[], xp: number): number {
  let lo = 0
  let hi = thresholds.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((thresholds[mid] as number) <= xp) lo = mid + 1
    else hi = mid
  }
  return lo
}

/**
 * Progress through the current level: XP earned within it, and the XP the level takes to
 * complete (0 at a custom curve's last level, which has no next).
 */
export function levelProgress (curve: LevelCurve, xp: number): { level: number, xp: number, required: number } {
  const level = levelForXp(curve, xp)
  return { level, xp: xp - xpForLevel(curve, level), required: xpToNextLevel(curve, level) }
}
