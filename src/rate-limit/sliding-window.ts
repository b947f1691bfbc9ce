// A sliding-window limiter on Redis (src/redis/commands/sliding-window-1.lua): one round trip
// per request, memory bounded by the number of slices, time taken from Redis.
import type { RedisClient } from '../redis/client.js'

/** Slices per window: each key holds at most BUCKETS + 1 small hash fields. */
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

  constructor (redis: RedisClient) {
    this.redis = redis
  }

  /** Counts one request against `key` if fewer than `limit` were admitted in the last window. */
  async hit (key: string, limit: number, windowMs: number): Promise<LimitResult> {
    const [admitted, count, reset] = await this.redis.slidingWindow(key, limit, windowMs, BUCKETS)
    return { success: admitted === 1, limit, remaining: Math.max(0, limit - count), reset }
  }
}
