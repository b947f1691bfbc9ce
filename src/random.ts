// The project's one seeded pseudo-random generator: the seed command's crowds and the tests'
// randomised cases both draw from it, so a seed replays exactly on every platform.

/** sfc32 seeded through xmur3 from a string (a number counts as its decimal text): small, fast, portable. */
export class Random {
  #a: number
  #b: number
  #c: number
  #d: number
  #spare: number | undefined

  constructor (seed: string | number) {
    const text = String(seed)
    let h = 1779033703 ^ text.length
    for (let i = 0; i < text.length; i++) {
      h = Math.imul(h ^ text.charCodeAt(i), 3432918353)
      h = (h << 13) | (h >>> 19)
    }
    const mix = (): number => {
      h = Math.imul(h ^ (h >>> 16), 2246822507)
      h = Math.imul(h ^ (h >>> 13), 3266489909)
      h ^= h >>> 16
      return h >>> 0
    }
    this.#a = mix()
    this.#b = mix()
    this.#c = mix()
    this.#d = mix()
    for (let i = 0; i < 15; i++) this.next()
  }

  /** Uniform in [0, 1). */
  next (): number {
    const t = (((this.#a + this.#b) | 0) + this.#d) | 0
    this.#d = (this.#d + 1) | 0
    this.#a = this.#b ^ (this.#b >>> 9)
    this.#b = (this.#c + (this.#c << 3)) | 0
    this.#c = (this.#c << 21) | (this.#c >>> 11)
    this.#c = (this.#c + t) | 0
    return (t >>> 0) / 4294967296
  }

  /** Uniform integer in [min, max]. */
  int (min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance (p: number): boolean {
    return this.next() < p
  }

  /** Uniform integer in [0, length): a place in a collection of that length. */
  index (length: number): number {
    return Math.floor(this.next() * length)
  }

  pick<T> (items: readonly T[]): T {
    return items[this.index(items.length)] as T
  }

  /** Standard normal, by Box-Muller (the second value of each pair is kept for the next call). */
  normal (): number {
    if (this.#spare !== undefined) {
      const spare = this.#spare
      this.#spare = undefined
      return spare
    }
    const u = 1 - this.next()
    const v = this.next()
    const r = Math.sqrt(-2 * Math.log(u))
    this.#spare = r * Math.sin(2 * Math.PI * v)
    return r * Math.cos(2 * Math.PI * v)
  }
}
