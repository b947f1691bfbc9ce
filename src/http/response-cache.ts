// A per-instance cache of serialized read responses that stays exact: an entry is served only
// while the server's data version (read from Redis with every request) is the one it was read
// at, and, for a body that depends on the day, on the same UTC day. Compressed forms are made
// once per entry, on first demand.
import { LRUCache } from 'lru-cache'
import { type ContentEncoding, entityTag } from './etag.js'
import { utcDay } from '../reader/leaderboard-reader.js'
import { encode } from './encoding.js'

const ENTRY_OVERHEAD = 200

export interface CachedBody {
  version: string
  /** UTC day (days since the epoch) the body was read on, when it depends on it. */
  day: number | undefined
  /** The entity tag, unquoted and without an encoding. */
  tag: string
  identity: Buffer
  br?: Buffer
  gzip?: Buffer
}

export class ResponseCache {
  readonly #lru: LRUCache<string, CachedBody> | null

  /** `maxBytes` 0 turns the cache off: every read goes to Redis. */
  constructor (maxBytes: number) {
    this.#lru = maxBytes > 0
      ? new LRUCache({
        maxSize: maxBytes,
        sizeCalculation: (entry, key) => ENTRY_OVERHEAD + key.length + entry.identity.length + (entry.br?.length ?? 0) + (entry.gzip?.length ?? 0)
      })
      : null
  }

  /** The entry for `key` if it was read at `version` (and on the UTC day of `nowMs`, if given). */
  get (key: string, version: string | undefined, nowMs?: number): CachedBody | undefined {
    if (this.#lru === null || version === undefined) return undefined
    const entry = this.#lru.get(key)
    if (entry === undefined || entry.version !== version) return undefined
    if (nowMs !== undefined && entry.day !== utcDay(nowMs)) return undefined
    return entry
  }

  /** Makes (and keeps) the entry for a body read at `version`, at `nowMs` when it depends on the day. */
  put (key: string, version: string, nowMs: number | undefined, body: string): CachedBody {
    const entry: CachedBody = {
      version,
      day: nowMs === undefined ? undefined : utcDay(nowMs),
      tag: entityTag(version, nowMs),
      identity: Buffer.from(body)
    }
    this.#lru?.set(key, entry)
    return entry
  }

  /** The entry's body in `encoding`, compressed on first demand and kept with the entry. */
  body (key: string, entry: CachedBody, encoding: ContentEncoding): Buffer {
    if (encoding === 'identity') return entry.identity
    let encoded = entry[encoding]
    if (encoded === undefined) {
      encoded = entry[encoding] = encode(entry.identity, encoding)
      // Set again so the cache accounts for the bytes just added (if the entry is still there).
      if (this.#lru?.peek(key) === entry) this.#lru.set(key, entry)
    }
    return encoded
  }
}
