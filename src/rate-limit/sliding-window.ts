// A sliding-window limiter on Redis (src/redis/commands/sliding-window-1.lua): memory bounded by
// the number of slices, time taken from Redis. The hits on one key made in one turn of the event
// loop (a poller's concurrent requests) go to Redis as one script call that takes them in turn,
// so a burst costs Redis one call, not one per request, with the same answers one by one would get.
import type { RedisClient } from '../redis/client.js'
import type { RedisClock } from '../redis/clock.js'
import type DataLoader from 'dataloader'
import { perTurnLoader } from '../redis/per-turn.js'
import { commandTimeoutOf } from '../redis/deadline.js'

/** Slices per window: each key holds at most BUCKETS + 1 slices and two bookkeeping fields. */
export const BUCKETS = 40

export interface LimitResult {
  /** Whether this request is admitted (a refused one is not counted). */
  success: boolean
  limit: number
  /** Requests still admitted in the current window. */
  remaining: number
  /** Milliseconds until the count falls (admitted) or until one more would be admitted (refused). */
  reset: number
}

interface Hit {
  key: string
  limit: number
  windowMs: number
  /** Only say what a request would get. */
  peek: boolean
}

export class SlidingWindow {
  readonly redis: RedisClient
  readonly clock: RedisClock | undefined
  /** A turn's hits, answered within the client's command timeout of the turn (src/redis/deadline.ts). */
  readonly #hits: DataLoader<Hit, LimitResult>

  constructor (redis: RedisClient, clock?: RedisClock) {
    this.redis = redis
    this.clock = clock
    this.#hits = perTurnLoader(async (hits) => await this.#runTurn(hits), commandTimeoutOf(redis))
  }

  /** Counts one request against `key` if fewer than `limit` were admitted in the last window. */
  async hit (key: string, limit: number, windowMs: number): Promise<LimitResult> {
    return await this.#hits.load({ key, limit, windowMs, peek: false })
  }

  /** What a request would get now, counting nothing. */
  async peek (key: string, limit: number, windowMs: number): Promise<LimitResult> {
    return await this.#hits.load({ key, limit, windowMs, peek: true })
  }

  /** One turn's hits: one script call per key (and limit, window, peek), answers in arrival order. */
  async #runTurn (hits: readonly Hit[]): Promise<Array<LimitResult | Error>> {
    const groups = new Map<string, number[]>()
    for (const [i, { key, limit, windowMs, peek }] of hits.entries()) {
      const id = `${peek ? 'peek' : 'hit'} ${limit} ${windowMs} ${key}`
      const group = groups.get(id)
      if (group === undefined) groups.set(id, [i])
      else group.push(i)
    }
    const results = new Array<LimitResult | Error>(hits.length)
    await Promise.all(Array.from(groups.values(), async (indexes) => {
      const { key, limit, windowMs, peek } = hits[indexes[0] as number] as Hit
      try {
        const [admitted, count, reset, now, refusedReset] =
          await this.redis.slidingWindow(key, limit, windowMs, BUCKETS, peek ? 1 : 0, indexes.length)
        this.clock?.observe(now)
        // Taken in turn: the first `admitted` are, each seeing the count up to itself; the rest are refused.
        const before = peek ? count : count - admitted
        for (const [i, index] of indexes.entries()) {
          const success = peek ? admitted === 1 : i < admitted
          const counted = peek ? before : before + Math.min(i + 1, admitted)
          results[index] = { success, limit, remaining: Math.max(0, limit - counted), reset: success ? reset : refusedReset }
        }
      } catch (err) {
        for (const index of indexes) results[index] = err instanceof Error ? err : new Error(String(err))
      }
    }))
    return results
  }
}
