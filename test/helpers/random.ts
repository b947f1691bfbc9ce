// A seeded pseudo-random generator (mulberry32), so a randomised test replays exactly.
export type Random = () => number

export function seededRandom (seed: number): Random {
  let a = seed
  return () => {
    a = (a + 0x6D2B79F5) | 0
    let r = Math.imul(a ^ (a >>> 15), 1 | a)
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296
  }
}

/** An integer from `min` to `max`, both included. */
export function randomInt (random: Random, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1))
}

export function pick<T> (random: Random, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)] as T
}
