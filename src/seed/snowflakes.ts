// Discord-style snowflake ids for a seeded crowd: account creation time, then worker, process and
// increment bits, drawn as two numbers (ms since the Discord epoch, and the low 22 bits) and
// spelled in decimal once every id is known to be distinct.
import type { Random } from '../random.js'

const DISCORD_EPOCH_MS = 1_420_070_400_000
const BILLION = 1_000_000_000
const FIRST_ACCOUNT_MS = Date.UTC(2015, 4, 13)
// Fixed, not "now", so that a seed gives the same ids whatever the day.
const LAST_ACCOUNT_MS = Date.UTC(2025, 0, 1)

/** Ms since the Discord epoch of an account's creation: newer accounts outnumber older ones. */
export function drawCreation (rng: Random): number {
  return FIRST_ACCOUNT_MS - DISCORD_EPOCH_MS + Math.floor((LAST_ACCOUNT_MS - FIRST_ACCOUNT_MS) * rng.next() ** 0.6)
}

export function drawLowBits (rng: Random): number {
  return rng.int(0, 1) * 131_072 + rng.int(0, 31) * 4096 + rng.int(0, 4095)
}

/** since * 2^22 + low in decimal. It is past 2^53, so it is written out in two exact halves of base 10^9 (BigInt costs more than planning the rest of a member). */
export function spellSnowflake (since: number, low: number): string {
  const upper = Math.floor(since / BILLION)
  const lower = (since - upper * BILLION) * 4_194_304 + low // < 2^52: exact
  let carry = Math.floor(lower / BILLION)
  if (carry * BILLION > lower) carry-- // the division may round up by one ulp
  const high = upper * 4_194_304 + carry
  const rest = String(lower - carry * BILLION)
  return high === 0 ? rest : String(high) + '000000000'.slice(rest.length) + rest
}

/** An id as one double, since * 2^22 + low: rounded past 2^53, so equal ids have equal doubles (and a few unequal ones too). */
export function idDouble (since: number, low: number): number {
  return since * 4_194_304 + low
}

/**
 * Ids that are drawn twice get drawn again, in plan order, until every id is distinct. A Set of a
 * million id strings costs more than planning the crowd, so the ids are sorted as doubles, and
 * only ids whose doubles meet are compared exactly.
 */
export function redrawRepeatedIds (rng: Random, since: Float64Array, low: Uint32Array): void {
  const n = since.length
  const value = (i: number): number => idDouble(since[i] as number, low[i] as number)
  for (;;) {
    const sorted = new Float64Array(n)
    for (let i = 0; i < n; i++) sorted[i] = value(i)
    const close = new Set<number>()
    sorted.sort()
    for (let k = 1; k < n; k++) if (sorted[k] === sorted[k - 1]) close.add(sorted[k] as number)
    if (close.size === 0) return
    // Seldom reached: the first holder of an id keeps it, the others draw again.
    const seen = new Set<string>()
    let redrawn = 0
    for (let i = 0; i < n; i++) {
      if (!close.has(value(i))) continue
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
