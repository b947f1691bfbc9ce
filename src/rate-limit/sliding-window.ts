// A sliding-window limiter on Redis (src/redis/commands/sliding-window-1.lua): one round trip
// per request, memory bounded by the number of slices, time taken from Redis.
import type { RedisClient } from '../redis/client.js'
import type { RedisClock } from '../redis/clock.js'

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

export class SlidingWindow {
  readonly redis: RedisClient
  readonly clock: RedisClock | undefined

  constructor (redis: RedisClient, clock?: RedisClock) {
    this.redis = redis
    this.clock = clock
  }

  /** Counts one request against `key` if fewer than `limit` were admitted in the last window. */
  async hit (key: string, limit: number, windowMs: number): Promise<LimitResult> {
    return await this.#run(key, limit, windowMs, false)
  }

  /** What a request would get now, counting nothing. */
  async peek (key: string, limit: number, windowMs: number): Promise<LimitResult> {
    return await this.#run(key, limit, windowMs, true)
  }

  async #run (key: string, limit: number, windowMs: number, peek: boolean): Promise<LimitResult> {
    const [admitted, count, reset, now] = await this.redis.slidingWindow(key, limit, windowMs, BUCKETS, peek ? 1 : 0)
    this.clock?.observe(now)
    return { success: admitted === 1, limit, remaining: Math.max(0, limit - count), reset }
  }
}
