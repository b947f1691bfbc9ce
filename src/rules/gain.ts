// The XP an award adds: floor(xp × the server's multiplier × the member's role and channel
// multipliers, stacked × the boost running), computed exactly. Every multiplier is a whole number
// of hundredths (validated by src/settings/settings.ts), so the product is a fraction of integers,
// computed in BigInt: `multiply` stacking of ten roles at 10 is 10^10 times the award, beyond a
// double's exact integers long before the floor. The write scripts take the gain as computed here,
// with the settings' epoch it was computed at (the script refuses it once the epoch moved).
import { MAX_XP } from '../levels/curves.js'
import type { Boost, GuildSettings } from '../settings/settings.js'

/** What an award may say about where it was earned. */
export interface AwardPlace {
  /** The member's roles (those with a multiplier count; the others are ignored). */
  roleIds?: readonly string[]
  /** The channel the XP was earned in. */
  channelId?: string
}

/** A multiplier as an exact fraction. */
export interface Fraction {
  num: bigint
  den: bigint
}

const ONE: Fraction = { num: 1n, den: 1n }

/**
 * The role and channel multipliers that apply to an award, stacked as the settings say: the
 * highest, their product or their sum; 1 when none applies. A 0 among them (a role or channel
 * where no XP is earned) makes it 0 in every mode.
 */
export function stackedMultiplier (multipliers: GuildSettings['multipliers'], place: AwardPlace): Fraction {
  const found: number[] = []
  for (const roleId of new Set(place.roleIds ?? [])) {
    const m = multipliers.roles[roleId]
    if (m !== undefined) found.push(m)
  }
  const channel = place.channelId === undefined ? undefined : multipliers.channels[place.channelId]
  if (channel !== undefined) found.push(channel)
  if (found.length === 0) return ONE
  if (found.includes(0)) return { num: 0n, den: 1n }
  switch (multipliers.stacking) {
    case 'highest': return { num: BigInt(Math.max(...found)), den: 100n }
    case 'add': return { num: BigInt(found.reduce((a, b) => a + b, 0)), den: 100n }
    case 'multiply': return { num: found.reduce((a, b) => a * BigInt(b), 1n), den: 100n ** BigInt(found.length) }
  }
}

/** The boost that applies among those running (the highest when several overlap), in hundredths; 100 when none. */
export function boostHundredths (running: readonly Boost[]): number {
  return running.reduce((best, b) => Math.max(best, b.hundredths), 100)
}

/**
 * floor(xp × server multiplier × stacked × boost), exact. A gain past MAX_XP is given as
 * MAX_XP + 1: no member can take it (the script refuses it as over the XP limit), and the number
 * stays an exact integer.
 */
export function awardGain (xp: number, serverHundredths: number, stacked: Fraction, boost: number): number {
  const gain = (BigInt(xp) * BigInt(serverHundredths) * stacked.num * BigInt(boost)) / (10_000n * stacked.den)
  return gain > BigInt(MAX_XP) ? MAX_XP + 1 : Number(gain)
}
