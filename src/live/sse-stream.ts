// The server side of one server-sent events response: the framing of events and comments, and
// a stream's state (what it last showed, when it last wrote, the event it holds back while its
// one-a-second bound lasts). It knows nothing of Redis or of Fastify: src/live/live-watcher.ts
// decides what to send, src/pipeline/live.ts opens and closes the responses.
import type { ServerResponse } from 'node:http'

/** One event, serialized once and written as the same bytes to every stream that shows it. */
export interface LiveEvent {
  /** The body's ETag header value, quoted (the event's `id:`). */
  readonly etag: string
  readonly bytes: Buffer
}

/** Fewest ms between two events of one stream (the contract's "at most once per second"). */
export const MIN_EVENT_INTERVAL_MS = 1000
/** Bytes a client may leave unread before its stream is ended (it reconnects when it catches up). */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** `event:`, `id:` and `data:` lines; the JSON body is one line (JSON.stringify escapes newlines). */
export function formatEvent (name: string, etag: string, json: string): Buffer {
  return Buffer.from(`event: ${name}\nid: ${etag}\ndata: ${json}\n\n`)
}

const KEEP_ALIVE = Buffer.from(': keep-alive\n\n')

/** The headers of a stream response, besides those the hooks set (request id, rate limit, CORS…). */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // nginx buffers a proxied response unless told not to; events must go out as they come.
  'x-accel-buffering': 'no'
} as const

export class SseStream {
  readonly #response: ServerResponse
  /** The ETag of the body the client holds (sent, or named by its Last-Event-ID). */
  lastEtag: string
  lastEventAt = 0
  lastWriteAt: number
  /** The latest event held back by the one-a-second bound. */
  pending: LiveEvent | undefined
  /** When the stream next counts against its key's quota. */
  nextChargeAt: number
  #ended = false

  constructor (response: ServerResponse, heldEtag: string, now: number, chargeEveryMs: number) {
    this.#response = response
    this.lastEtag = heldEtag
    this.lastWriteAt = now
    this.nextChargeAt = now + chargeEveryMs
  }

  get ended (): boolean {
    return this.#ended || this.#response.destroyed || this.#response.writableEnded
  }

  /**
   * Shows `event` unless the client holds that body already: at once when the last event is a
   * second old, else kept (replacing any kept before) for `flush`. True when it was written.
   */
  offer (event: LiveEvent, now: number): boolean {
    if (event.etag === this.lastEtag) {
      this.pending = undefined
      return false
    }
    if (now - this.lastEventAt < MIN_EVENT_INTERVAL_MS) {
      this.pending = event
      return false
    }
    return this.#send(event, now)
  }

  /** Writes the held event once the bound allows it. True when it was written. */
  flush (now: number): boolean {
    const event = this.pending
    if (event === undefined || now - this.lastEventAt < MIN_EVENT_INTERVAL_MS) return false
    this.pending = undefined
    return this.#send(event, now)
  }

  /** A comment line when nothing was written for `silentMs`, so proxies keep the connection. */
  keepAlive (now: number, silentMs: number): void {
    if (now - this.lastWriteAt >= silentMs) this.#write(KEEP_ALIVE, now)
  }

  /** Writes `bytes` as they are (a final error event, say). */
  writeRaw (bytes: Buffer, now: number): void {
    this.#write(bytes, now)
  }

  end (): void {
    if (this.#ended) return
    this.#ended = true
    if (!this.#response.destroyed) this.#response.end()
  }

  #send (event: LiveEvent, now: number): boolean {
    this.lastEtag = event.etag
    this.lastEventAt = now
    return this.#write(event.bytes, now)
  }

  #write (bytes: Buffer, now: number): boolean {
    if (this.ended) return false
    // A client that stopped reading would hold every later event in this process's memory.
    if (this.#response.writableLength > MAX_BUFFERED_BYTES) {
      this.#response.destroy()
      return false
    }
    this.lastWriteAt = now
    this.#response.write(bytes)
    return true
  }
}
