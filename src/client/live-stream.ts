// Live updates for the typed client: one of the API's `…/stream` endpoints read with fetch (so
// the key stays in a header, in browsers too), parsed by sse-parser.ts, as an async
// iterator of bodies. It reconnects by itself (after a dropped connection, a stream the server
// ended, a 429 or 503) with growing delays and Last-Event-ID, so no body is sent twice; it stops
// when the signal aborts (the loop simply ends) or on an answer a retry cannot change (401, 403,
// 404, 400: thrown as LeaderboardApiError).
import { LeaderboardApiError, retryAfterOf } from './api-error.js'
import type { ApiErrorCode } from './api-error.js'
import { type SseEvent, SseParser } from './sse-parser.js'
import { sleep } from './sleep.js'

/** One event: the endpoint's body and its ETag (also the event's id). */
export interface LiveUpdate<T> {
  data: T
  etag: string
}

export interface WatchOptions {
  /** Stops the watch: the iteration ends without an error. */
  signal?: AbortSignal
  /** The ETag of a body already held: the first event comes only when the body differs. */
  lastEventId?: string
  /** First reconnection delay, doubled after each failure in a row up to `maxRetryMs` (500 ms). */
  minRetryMs?: number
  /** Longest reconnection delay (30 s). */
  maxRetryMs?: number
  /** A connection silent this long (no event, no keep-alive comment) is dropped and opened again (45 s). */
  idleTimeoutMs?: number
  /** Told of each failure the watch recovers from, with the delay before the next attempt. */
  onReconnect?: (error: unknown, delayMs: number) => void
}

export interface StreamRequest {
  fetch: typeof fetch
  url: string
  /** undefined on a public board: no key is sent. */
  apiKey: string | undefined
  /** The event name that carries the body (`leaderboard`, `member`, `stats`). */
  event: string
}

/** Statuses worth retrying: the key's quota or the service, not the request. */
const RETRIED = new Set([408, 429, 500, 502, 503, 504])

export async function * watchStream<T> (request: StreamRequest, options: WatchOptions = {}): AsyncGenerator<LiveUpdate<T>, void, undefined> {
  const { signal, minRetryMs = 500, maxRetryMs = 30_000, idleTimeoutMs = 45_000 } = options
  let lastEventId = options.lastEventId
  let failures = 0
  const retryAfter = async (error: unknown, serverDelayMs?: number): Promise<boolean> => {
    failures++
    const backoff = Math.min(maxRetryMs, minRetryMs * 2 ** (failures - 1))
    const delay = serverDelayMs ?? Math.round(backoff / 2 + Math.random() * backoff / 2) // jitter: clients spread out
    options.onReconnect?.(error, delay)
    try {
      await sleep(delay, signal)
      return true
    } catch {
      return false // aborted
    }
  }

  const aborted = (): boolean => signal?.aborted === true
  while (!aborted()) {
    const attempt = new AbortController()
    let idle: ReturnType<typeof setTimeout> | undefined
    // An abort ends the attempt and its idle timer at once, also while the generator waits at a
    // `yield` for its consumer (its `finally` runs only when resumed): a program that aborts its
    // watches exits then, not when the idle timer would have fired.
    const stopAttempt = (): void => { clearTimeout(idle); attempt.abort(signal?.reason) }
    signal?.addEventListener('abort', stopAttempt, { once: true })
    const stillAlive = (): void => {
      clearTimeout(idle)
      if (attempt.signal.aborted) return
      idle = setTimeout(() => { attempt.abort(new Error(`no data for ${idleTimeoutMs} ms`)) }, idleTimeoutMs)
    }
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' }
      if (request.apiKey !== undefined) headers['x-api-key'] = request.apiKey
      if (lastEventId !== undefined) headers['last-event-id'] = lastEventId
      stillAlive()
      const response = await request.fetch(request.url, { headers, signal: attempt.signal })
      if (!response.ok || response.body === null) {
        const error = await LeaderboardApiError.fromResponse(response)
        if (!RETRIED.has(response.status)) throw error
        const wait = retryAfterOf(response.headers)
        if (await retryAfter(error, wait === undefined ? undefined : wait * 1000)) continue
        return
      }
      const events: SseEvent[] = []
      const parser = new SseParser((event) => { events.push(event) }, stillAlive)
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
      try {
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          stillAlive()
          parser.feed(value)
          for (let event = events.shift(); event !== undefined; event = events.shift()) {
            if (event.event === 'error') throw errorOf(event.data)
            if (event.event !== request.event || event.id === undefined) continue
            lastEventId = event.id
            failures = 0
            yield { data: JSON.parse(event.data) as T, etag: event.id }
          }
        }
      } finally {
        reader.cancel().catch(() => {})
      }
      // The server ended the stream (it is shutting down, or the key's quota ran out): again.
      if (!await retryAfter(new Error('the stream ended'))) return
    } catch (error) {
      if (aborted()) return
      if (error instanceof LeaderboardApiError) throw error
      if (!await retryAfter(error)) return
    } finally {
      clearTimeout(idle)
      signal?.removeEventListener('abort', stopAttempt)
    }
  }
}

/** An `error` event's body (the endpoint's error answer, such as a member removed) as an error. */
function errorOf (data: string): LeaderboardApiError {
  let body: { statusCode?: unknown, code?: unknown, message?: unknown } = {}
  try { body = JSON.parse(data) as typeof body } catch {}
  const statusCode = typeof body.statusCode === 'number' ? body.statusCode : 500
  return new LeaderboardApiError(statusCode, typeof body.code === 'string' ? body.code as ApiErrorCode : `http_${statusCode}` as ApiErrorCode,
    typeof body.message === 'string' ? body.message : data)
}
