// What a change of settings would do to a server's members, as XP ranges to count on its board:
// a member's level and its reward roles depend on its XP alone, so "the members whose level
// changes" and "the members who would gain or lose a role" are counts of members in a few XP
// ranges, never a walk over the members. src/settings/settings-preview.ts counts them (ZCOUNT).
//
// The members whose level stays are those in the ranges where both curves give the same level L:
// one range per level, up to the lower of the two curves' levels at the board's highest XP (under
// 9,000 for mee6 up to MAX_XP, 1,000 for a custom curve; only two long linear or flat curves at
// millions of XP reach more). A role is held over one range of XP: from its level on (stack), or
// up to the next reward level (replace); its gains and losses are the new range less the old.
import { type LevelCurve, xpForLevel } from '../levels/curves.js'
import type { GuildSettings, RoleReward } from '../settings/settings.js'

/** A range of XP, both ends included; `max` Infinity for no end. */
export interface XpRange {
  min: number
  max: number
}

const EVERYTHING: XpRange = { min: 0, max: Infinity }

/** The XP that reaches `level`, or Infinity past a custom curve's last level. */
function threshold (curve: LevelCurve, level: number): number {
  return typeof curve !== 'string' && level > curve.thresholds.length ? Infinity : xpForLevel(curve, level)
}

function sameCurve (a: LevelCurve, b: LevelCurve): boolean {
  if (typeof a === 'string' || typeof b === 'string') return a === b
  return a.thresholds.length === b.thresholds.length && a.thresholds.every((x, i) => x === b.thresholds[i])
}

/** The ranges of XP (up to `maxXp`, the board's highest) in which `a` and `b` give the same level. */
export function sameLevelRanges (a: LevelCurve, b: LevelCurve, maxXp: number): XpRange[] {
  if (sameCurve(a, b)) return [EVERYTHING]
  const ranges: XpRange[] = []
  for (let level = 0; ; level++) {
    const min = Math.max(threshold(a, level), threshold(b, level))
    if (min > maxXp) return ranges
    const max = Math.min(threshold(a, level + 1), threshold(b, level + 1)) - 1
    if (min <= max) ranges.push({ min, max })
  }
}

/** The range of XP over which a member holds `reward`'s role, or null when no XP reaches it. */
export function holderRange (rewards: readonly RoleReward[], mode: GuildSettings['roleRewardsMode'], curve: LevelCurve, reward: RoleReward): XpRange | null {
  const min = threshold(curve, reward.level)
  if (min === Infinity) return null
  if (mode === 'stack') return { min, max: Infinity }
  const next = rewards.find((r) => r.level > reward.level)
  return { min, max: next === undefined ? Infinity : threshold(curve, next.level) - 1 }
}

/** Both ranges' common part, or null. */
export function intersection (a: XpRange | null, b: XpRange | null): XpRange | null {
  if (a === null || b === null) return null
  const range = { min: Math.max(a.min, b.min), max: Math.min(a.max, b.max) }
  return range.min <= range.max ? range : null
}

/** One role of either settings' rewards: its holders' ranges before and after. */
export interface RolePlan {
  roleId: string
  /** Its level in the new settings; null when they no longer give it. */
  level: number | null
  before: XpRange | null
  after: XpRange | null
  both: XpRange | null
}

/** The roles of the current and the proposed rewards (the proposed ones first, by level), with their holders' ranges. */
export function rolePlans (current: GuildSettings, proposed: GuildSettings, currentCurve: LevelCurve, proposedCurve: LevelCurve): RolePlan[] {
  const ids = [...new Set([...proposed.roleRewards.map((r) => r.roleId), ...current.roleRewards.map((r) => r.roleId)])]
  return ids.map((roleId) => {
    const was = current.roleRewards.find((r) => r.roleId === roleId)
    const will = proposed.roleRewards.find((r) => r.roleId === roleId)
    const before = was === undefined ? null : holderRange(current.roleRewards, current.roleRewardsMode, currentCurve, was)
    const after = will === undefined ? null : holderRange(proposed.roleRewards, proposed.roleRewardsMode, proposedCurve, will)
    return { roleId, level: will?.level ?? null, before, after, both: intersection(before, after) }
  })
}
