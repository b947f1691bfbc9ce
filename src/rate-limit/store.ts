// The custom store @fastify/rate-limit calls: it adapts SlidingWindow to the plugin's
// `incr(key, cb, timeWindow, max)` contract. The plugin refuses when `current > max`, so a
// refusal (which our window does not count) is reported as max + 1.
import type { KeyBuilder } from '../redis/keys.js'
import type { SlidingWindow } from './sliding-window.js'

type IncrCallback = (err: Error | null, result?: { current: number, ttl: number }) => void

export interface RateLimitStore {
  incr: (key: string, callback: IncrCallback, timeWindow: number, max: number) => void
  child: (routeOptions: unknown) => RateLimitStore
}

/** A store class bound to one limiter; the plugin instantiates it with `new`. */
export function slidingWindowStore (window: SlidingWindow, keys: KeyBuilder): new () => RateLimitStore {
  return class SlidingWindowStore implements RateLimitStore {
    incr (keyId: string, callback: IncrCallback, timeWindow: number, max: number): void {
      window.hit(keys.keyRateLimit(keyId), max, timeWindow).then(
        (r) => { callback(null, { current: r.success ? r.limit - r.remaining : r.limit + 1, ttl: r.reset }) },
        (err: Error) => { callback(err) }
      )
    }

    child (): RateLimitStore {
      return this
    }
  }
}
