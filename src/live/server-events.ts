// A server's events (src/webhooks/events.ts) for its stats streams, as typed server-sent events
// (`event: member.leveled_up`, the webhook's body as `data:`). A stream listening tells the write
// scripts to add every type to the server's event stream until a time (Redis's clock, as
// estimated here: LISTEN_MS leaves room for the estimate's error); the watcher renews that while a
// stats stream is open, and reads what was added each tick.
import type { RedisClient } from '../redis/client.js'
import type { KeyBuilder } from '../redis/keys.js'
import type { RedisClock } from '../redis/clock.js'
import { queuedEvent } from '../webhooks/events.js'

/** How long one call keeps the write scripts adding events: a few ticks, renewed each LISTEN_RENEW_MS. */
export const LISTEN_MS = 10_000
export const LISTEN_RENEW_MS = 3000
/** Events read per server per tick at most; more wait for the next tick. */
export const EVENTS_READ_BATCH = 1000

export interface TypedEvent {
  /** The stream id: the next read starts after it. */
  streamId: string
  /** The whole server-sent event. */
  bytes: Buffer
}

/** `event:` and `data:` lines, no `id:`: a reconnection's Last-Event-ID stays the stats body's ETag. */
export function formatTypedEvent (type: string, json: string): Buffer {
  return Buffer.from(`event: ${type}\ndata: ${json}\n\n`)
}

export class ServerEventFeed {
  readonly #redis: RedisClient
  readonly #keys: KeyBuilder
  readonly #clock: RedisClock

  constructor (redis: RedisClient, keys: KeyBuilder, clock: RedisClock) {
    this.#redis = redis
    this.#keys = keys
    this.#clock = clock
  }

  /**
   * Listens for LISTEN_MS more (two plain commands, no script: a watched server costs Redis a
   * write every LISTEN_RENEW_MS); returns the stream's last event id, '0-0' for none (what to read after).
   */
  async listen (guildId: string): Promise<string> {
    const k = this.#keys.guild(guildId)
    const [, last] = await Promise.all([
      this.#redis.hset(k.eventSubscriptions, 'live', String(Math.round(this.#clock.now() + LISTEN_MS))),
      this.#redis.xrevrange(k.events, '+', '-', 'COUNT', 1)
    ])
    return last[0]?.[0] ?? '0-0'
  }

  /** The events added after `after`, oldest first (pings, which are for one webhook, left out). */
  async read (guildId: string, after: string): Promise<TypedEvent[]> {
    const entries = await this.#redis.xrange(this.#keys.guild(guildId).events, `(${after}`, '+', 'COUNT', EVENTS_READ_BATCH)
    const events: TypedEvent[] = []
    for (const [streamId, fields] of entries) {
      const queued = queuedEvent(guildId, streamId, fields)
      if (queued === undefined || queued.event.type === 'ping') {
        events.push({ streamId, bytes: Buffer.alloc(0) })
        continue
      }
      events.push({ streamId, bytes: formatTypedEvent(queued.event.type, JSON.stringify(queued.event)) })
    }
    return events
  }
}
