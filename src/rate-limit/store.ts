// The custom store @fastify/rate-limit calls: it adapts SlidingWindow to the plugin's
// `incr(key, cb, timeWindow, max)` contract, and `read` (the plugin's `{ increment: false }`)
// to a peek that counts nothing. The plugin refuses when `current > max`, so a refusal (which
// our window does not count) is reported as max + 1.
import type { FastifyRateLimitOptions, FastifyRateLimitStore } from '@fastify/rate-limit'
import type { KeyBuilder } from '../redis/keys.js'
import type { LimitResult, SlidingWindow } from './sliding-window.js'

type IncrCallback = Parameters<FastifyRateLimitStore['incr']>[1]

export interface SlidingWindowStore extends FastifyRateLimitStore {
  read: FastifyRateLimitStore['incr']
}

function report (callback: IncrCallback): [(r: LimitResult) => void, (err: Error) => void] {
  return [
    (r) => { callback(null, { current: r.success ? r.limit - r.remaining : r.limit + 1, ttl: r.reset }) },
    (err) => { callback(err) }
  ]
}

/** A store class bound to one limiter; the plugin instantiates it with `new`. */
export function slidingWindowStore (window: SlidingWindow, keys: KeyBuilder): new (options: FastifyRateLimitOptions) => SlidingWindowStore {
  return class implements SlidingWindowStore {
    incr (keyId: string, callback: IncrCallback, timeWindow: number, max: number): void {
      window.hit(keys.keyRateLimit(keyId), max, timeWindow).then(...report(callback))
    }

    read (keyId: string, callback: IncrCallback, timeWindow: number, max: number): void {
      window.peek(keys.keyRateLimit(keyId), max, timeWindow).then(
        (r) => { callback(null, { current: r.limit - r.remaining, ttl: r.reset }) },
        (err: Error) => { callback(err) })
    }

    child (): FastifyRateLimitStore {
      return this
    }
  }
}
