// The server side of one server-sent events response: the framing of events and comments, and
// a stream's state (what it last showed, when it last wrote, the one event it holds back while
// its one-a-second bound lasts or its client has not taken the last write). It knows nothing of
// Redis or of Fastify: src/live/live-watcher.ts decides what to send, src/pipeline/live.ts opens
// and closes the responses.
import type { ServerResponse } from 'node:http'

/** One event, serialized once and written as the same bytes to every stream that shows it. */
export interface LiveEvent extends Framed {
  /** The body's ETag header value, quoted (the event's `id:`). */
  readonly etag: string
}

/** Fewest ms between two events of one stream (the contract's "at most once per second"). */
export const MIN_EVENT_INTERVAL_MS = 1000
/**
 * Bytes of the server's typed events a stream may hold while its client does not take them (a
 * few dozen level-ups): unlike pages they cannot be coalesced, so past this the stream ends.
 */
export const MAX_HELD_TYPED_BYTES = 16 * 1024

/** `event:`, `id:` and `data:` lines; the JSON body is one line (JSON.stringify escapes newlines). */
export function formatEvent (name: string, etag: string, json: string): LiveEvent {
  return { etag, ...framed(Buffer.from(`event: ${name}\nid: ${etag}\ndata: ${json}\n\n`)) }
}

/** Bytes of the body, as they are and as one chunk of a chunked body (RFC 9112, 7.1). */
export interface Framed {
  readonly bytes: Buffer
  readonly chunk: Buffer
}

/** `bytes` and their chunk: built once, written to every stream. */
export function framed (bytes: Buffer): Framed {
  return { bytes, chunk: Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, CRLF]) }
}

const CRLF = Buffer.from('\r\n')
const KEEP_ALIVE = framed(Buffer.from(': keep-alive\n\n'))

/** The headers of a stream response, besides those the hooks set (request id, rate limit, CORS…). */
export const STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  // nginx buffers a proxied response unless told not to; events must go out as they come.
  'x-accel-buffering': 'no',
  // The connection's last response: its parser is given back once the stream is open
  // (./stream-connection.ts), so no next request on it would be read.
  connection: 'close'
} as const

export class SseStream {
  readonly #response: ServerResponse
  /** The ETag of the body the client holds (written, or named by its Last-Event-ID). */
  lastEtag: string
  lastEventAt = 0
  lastWriteAt: number
  /**
   * The latest event not yet written: held back by the one-a-second bound, or while the client
   * has not taken the last write. A newer one replaces it, so a client that stops reading costs
   * one event, and gets the latest page, not a backlog, once it reads again.
   */
  pending: LiveEvent | undefined
  /** The server's typed events not yet written, oldest first, and their size. */
  #typed: Buffer[] = []
  #typedBytes = 0
  /** When the stream next counts against its key's quota. */
  nextChargeAt: number
  #ended = false
  /** A write whose bytes the socket has not handed to the kernel yet: its client is not reading. */
  #writing = false
  /** The write callback: one per stream, not one per write. */
  readonly #written = (): void => { this.#writing = false }
  readonly #framing: 'chunked' | 'as is' | 'no body'

  constructor (response: ServerResponse, heldEtag: string, now: number, chargeEveryMs: number) {
    this.#response = response
    // Decided by Node when the headers went out: chunks for HTTP/1.1, the bytes as they are for
    // HTTP/1.0 (the body ends with the connection), nothing for HEAD.
    this.#framing = response.req.method === 'HEAD' ? 'no body' : response.chunkedEncoding ? 'chunked' : 'as is'
    this.lastEtag = heldEtag
    this.lastWriteAt = now
    this.nextChargeAt = now + chargeEveryMs
  }

  get ended (): boolean {
    return this.#ended || this.#response.destroyed || this.#response.writableEnded
  }

  /**
   * Shows `event` unless the client holds that body already: at once when the last event is a
   * second old and the last write was taken, else kept (replacing any kept before) for `flush`.
   * True when it was written.
   */
  offer (event: LiveEvent, now: number): boolean {
    if (event.etag === this.lastEtag) {
      this.pending = undefined
      return false
    }
    this.pending = event
    return this.flush(now)
  }

  /**
   * Writes what is held once the client took the last write: the typed events, and the page
   * when the one-a-second bound allows it, in one write. True when the page was written.
   */
  flush (now: number): boolean {
    const event = this.pending !== undefined && now - this.lastEventAt >= MIN_EVENT_INTERVAL_MS ? this.pending : undefined
    if (this.#typed.length > 0) {
      const bytes = Buffer.concat(event === undefined ? this.#typed : [...this.#typed, event.bytes])
      if (!this.#write(framed(bytes), now)) return false
      this.#typed = []
      this.#typedBytes = 0
    } else if (event === undefined || !this.#write(event, now)) {
      return false
    }
    if (event === undefined) return false
    this.pending = undefined
    this.lastEtag = event.etag
    this.lastEventAt = now
    return true
  }

  /**
   * The server's typed events (one read's, framed once for every stream): written at once when
   * the client took the last write, else held, in order, for `flush`. False when that would hold
   * more than MAX_HELD_TYPED_BYTES: the client is not reading, and the stream must end.
   */
  writeTyped (events: Framed, now: number): boolean {
    if (this.#typed.length === 0 && this.#write(events, now)) return true
    if (this.#typedBytes + events.bytes.length > MAX_HELD_TYPED_BYTES) return false
    this.#typed.push(events.bytes)
    this.#typedBytes += events.bytes.length
    return true
  }

  /** A comment line when nothing was written for `silentMs`, so proxies keep the connection. */
  keepAlive (now: number, silentMs: number): void {
    if (now - this.lastWriteAt >= silentMs) this.#write(KEEP_ALIVE, now)
  }

  /** Writes `bytes` whether the client took the last write or not: the last thing it is sent (an error event). */
  writeLast (bytes: Buffer, now: number): void {
    if (this.ended) return
    this.lastWriteAt = now
    this.#send(framed(bytes), undefined)
  }

  end (): void {
    if (this.#ended) return
    this.#ended = true
    if (!this.#response.destroyed) this.#response.end()
  }

  /** Writes unless the last write is still waiting for its client. */
  #write (data: Framed, now: number): boolean {
    if (this.ended || this.#writing) return false
    this.lastWriteAt = now
    this.#writing = this.#send(data, this.#written)
    return true
  }

  /**
   * Straight to the socket, in the response's framing, with the bytes framed once for every
   * stream: the response's own write frames each chunk again and holds every socket it writes to
   * corked until the next tick, so showing a change to 10,000 streams kept 10,000 writes' objects
   * alive at once, and V8 promoted them. `callback` runs once the socket has handed the bytes to
   * the kernel (at once while the client reads), or with an error when the connection is gone.
   * False when nothing was written.
   */
  #send (data: Framed, callback: (() => void) | undefined): boolean {
    const socket = this.#response.socket
    if (socket === null || this.#framing === 'no body') return false
    socket.write(this.#framing === 'chunked' ? data.chunk : data.bytes, callback)
    return true
  }
}
