// A per-instance cache of serialized read responses that stays exact: an entry is served only
// while the server's data version (read from Redis with every request) is the one it was read
// at, and, for a body that depends on the day, on the same UTC day. Compressed forms are made
// once per entry, on first demand.
//
// The bound is on memory, not on entries: each entry is counted with every byte it holds (its
// body in each encoding, its key and tag, and fixed overheads for the objects around them), and
// each body is a Buffer of exactly its own size. Node's small Buffers are slices of shared 8 KiB
// pools, and zlib's results slices of its output chunks (16 KiB unless told): a 38-byte gzip
// kept that way holds the whole chunk, which the count would not see.
import { LRUCache } from 'lru-cache'
import { type ContentEncoding, entityTag } from './etag.js'
import { utcDay } from '../periods/periods.js'
import { encode } from './encoding.js'

/**
 * Bytes counted for an entry besides its bodies, key and tag: the entry object, its Buffer and
 * its backing store, the cache's own node and the served URL that leads to it, and the room V8
 * leaves unused around them in its old generation: a cache that turns over strews its entries
 * among pages that its default compaction does not empty. Counting the objects alone let resident
 * memory outgrow the cache by more the more entries it held (the figures: docs/api.md, "What the
 * cache holds in memory").
 */
export const ENTRY_OVERHEAD = 2000

/**
 * Bytes counted for each compressed form besides its length: its Buffer, backing store and
 * allocation, and the larger entry that replaces the one before (docs/api.md).
 */
export const COMPRESSED_FORM_OVERHEAD = 1000

export interface CachedBody {
  readonly version: string
  /** UTC day (days since the epoch) the body was read on, when it depends on it. */
  readonly day: number | undefined
  /** The entity tag, unquoted and without an encoding. */
  readonly tag: string
  readonly identity: Buffer
  readonly br?: Buffer
  readonly gzip?: Buffer
}

/** `bytes` in a Buffer that owns exactly that much memory (not a slice of a larger one). */
function ownedCopy (bytes: Uint8Array | string): Buffer {
  const length = typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.length
  const owned = Buffer.allocUnsafeSlow(length)
  if (typeof bytes === 'string') owned.write(bytes)
  else owned.set(bytes)
  return owned
}

function formSize (form: Buffer | undefined): number {
  return form === undefined ? 0 : COMPRESSED_FORM_OVERHEAD + form.length
}

function entrySize (entry: CachedBody, key: string): number {
  return ENTRY_OVERHEAD + key.length + entry.version.length + entry.tag.length +
    entry.identity.length + formSize(entry.br) + formSize(entry.gzip)
}

export class ResponseCache {
  readonly #lru: LRUCache<string, CachedBody> | null

  /** `maxBytes` 0 turns the cache off: every read goes to Redis. */
  constructor (maxBytes: number) {
    this.#lru = maxBytes > 0 ? new LRUCache({ maxSize: maxBytes, sizeCalculation: entrySize }) : null
  }

  /** Bytes the cache counts now (at most the `maxBytes` it was made with). */
  get size (): number {
    return this.#lru?.calculatedSize ?? 0
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
      identity: ownedCopy(body)
    }
    this.#lru?.set(key, entry)
    return entry
  }

  /**
   * The entry's body in `encoding`, compressed on first demand. The compressed form is kept in a
   * new entry that replaces this one, if this one is still the cache's (lru-cache measures an
   * entry when it is set, and would not see bytes added to an object it already holds).
   */
  body (key: string, entry: CachedBody, encoding: ContentEncoding): Buffer {
    if (encoding === 'identity') return entry.identity
    const kept = entry[encoding]
    if (kept !== undefined) return kept
    // The cache's entry for this key holds the same body when it was read at the same version and day.
    const current = this.#lru?.peek(key)
    const same = current !== undefined && current.version === entry.version && current.day === entry.day
    const known = same ? current[encoding] : undefined
    if (known !== undefined) return known
    const encoded = ownedCopy(encode(entry.identity, encoding))
    if (same) this.#lru?.set(key, { ...current, [encoding]: encoded })
    return encoded
  }
}
