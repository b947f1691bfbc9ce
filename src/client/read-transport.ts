// The HTTP side of the typed clients (leaderboard-client.ts for the keyed API, public-board-client.ts
// for public boards): every request goes through get, every stream through watch. ETag
// revalidation (a 304 is free of quota), and retries of what passes (a network error, a 502, 503
// or 504, a 429 with retry-after) with backoff and jitter, each reported to onRetry. Every call
// sends a request id of its own, which an error carries.
import type { ApiResult, CallOptions, Query } from './call.js'
import { LeaderboardApiError, rateLimitOf, retryAfterOf, type RateLimit } from './api-error.js'
import { type LiveUpdate, watchStream, type WatchOptions } from './live-stream.js'
import { sleep } from './sleep.js'

/** What both clients take, beside their root URL (and the keyed one's key). */
export interface TransportOptions {
  /** A fetch of your own (a proxy agent, instrumentation); the global one by default. */
  fetch?: typeof fetch
  /** Time allowed for each attempt, in ms (10 s). */
  timeoutMs?: number
  /**
   * Retries of a call (2): after a network error or an attempt's timeout, a 502, 503 or 504, and
   * a 429 that carries retry-after. Every endpoint is a GET, so a retry is always safe.
   */
  maxRetries?: number
  /** The first retry's backoff, in ms (250): each further one doubles it, and each is drawn at random below that ("full jitter"). */
  retryBaseMs?: number
  /** The longest wait before a retry, in ms (10 s): a retry-after longer than that is thrown at once, for a UI to show. */
  maxRetryWaitMs?: number
  /** Called before each retry's wait, with why and for how long: a UI can say "retrying…". */
  onRetry?: (retry: RetryInfo) => void
  /** URLs whose last ETag and body are kept for revalidation (100). */
  cacheEntries?: number
}

/** What onRetry is told before a retry. */
export interface RetryInfo {
  /** The retry about to be made: 1 for the first. */
  attempt: number
  /** Ms it waits first: the answer's retry-after, or the backoff. */
  delayMs: number
  url: string
  /** The request id the call sends on every attempt (the service logs it). */
  requestId: string
  /** The status of the answer retried, or undefined for a network error or a timeout. */
  status: number | undefined
  /** The error of an attempt that got no answer (a network error, a timeout). */
  error: unknown
}

interface Remembered { etag: string, data: unknown }

/** A client's requests: its options, the ETags it remembers, and the quota as last seen. */
export class ReadTransport {
  /** The quota as of the last response seen (an error's included). */
  rateLimit: RateLimit | undefined
  readonly #options: Required<Omit<TransportOptions, 'fetch' | 'onRetry'>> & Pick<TransportOptions, 'onRetry'> & { fetch: typeof fetch, baseUrl: string, apiKey: string | undefined }
  readonly #remembered = new Map<string, Remembered>()

  /** `apiKey` undefined: no key is sent (public boards). */
  constructor (baseUrl: string, apiKey: string | undefined, options: TransportOptions) {
    this.#options = {
      timeoutMs: 10_000,
      maxRetries: 2,
      retryBaseMs: 250,
      maxRetryWaitMs: 10_000,
      cacheEntries: 100,
      ...options,
      apiKey,
      baseUrl: baseUrl.replace(/\/+$/, ''),
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis)
    }
  }

  watch<T> (path: string, query: Query, event: string, options: WatchOptions): AsyncGenerator<LiveUpdate<T>, void, undefined> {
    return watchStream<T>({ fetch: this.#options.fetch, url: this.#url(path, query), apiKey: this.#options.apiKey, event }, options)
  }

  #url (path: string, query: Query): string {
    const url = new URL(`${this.#options.baseUrl}/${path}`)
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    return url.toString()
  }

  async get<T> (path: string, query: Query, { signal }: CallOptions): Promise<ApiResult<T>> {
    const key = this.#url(path, query)
    const requestId = globalThis.crypto.randomUUID()
    for (let attempt = 0; ; attempt++) {
      const remembered = this.#remembered.get(key)
      const headers: Record<string, string> = { accept: 'application/json', 'x-request-id': requestId }
      if (this.#options.apiKey !== undefined) headers['x-api-key'] = this.#options.apiKey
      if (remembered !== undefined) headers['if-none-match'] = remembered.etag
      const timeout = AbortSignal.timeout(this.#options.timeoutMs)
      let response: Response
      try {
        response = await this.#options.fetch(key, {
          headers, signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout])
        })
      } catch (error) {
        // The caller's abort ends the call; a network error or this attempt's timeout is retried.
        if (signal?.aborted === true || attempt >= this.#options.maxRetries) throw error
        await this.#retry({ attempt: attempt + 1, delayMs: this.#backoff(attempt), url: key, requestId, status: undefined, error }, signal)
        continue
      }
      const rateLimit = rateLimitOf(response.headers)
      if (rateLimit !== undefined) this.rateLimit = rateLimit
      if (response.status === 304 && remembered !== undefined) {
        this.#remember(key, remembered) // most recently used
        return { data: remembered.data as T, notModified: true, rateLimit }
      }
      if (response.ok) {
        const data = await response.json() as T
        const etag = response.headers.get('etag')
        if (etag === null) this.#remembered.delete(key)
        else this.#remember(key, { etag, data })
        return { data, notModified: false, rateLimit }
      }
      const delayMs = this.#retryDelay(response, attempt)
      if (delayMs !== undefined) {
        await response.body?.cancel()
        await this.#retry({ attempt: attempt + 1, delayMs, url: key, requestId, status: response.status, error: undefined }, signal)
        continue
      }
      throw await LeaderboardApiError.fromResponse(response, requestId)
    }
  }

  /** How long to wait before retrying `response`, or undefined when it is not retried. */
  #retryDelay (response: Response, attempt: number): number | undefined {
    if (attempt >= this.#options.maxRetries) return undefined
    const retryAfter = retryAfterOf(response.headers)
    const passing = response.status === 502 || response.status === 503 || response.status === 504
    if (!passing && !(response.status === 429 && retryAfter !== undefined)) return undefined
    const delayMs = retryAfter !== undefined ? retryAfter * 1000 : this.#backoff(attempt)
    return delayMs <= this.#options.maxRetryWaitMs ? delayMs : undefined
  }

  /** Full jitter: a random wait below retryBaseMs doubled per attempt, never past maxRetryWaitMs. */
  #backoff (attempt: number): number {
    return Math.floor(Math.random() * Math.min(this.#options.maxRetryWaitMs, this.#options.retryBaseMs * 2 ** attempt))
  }

  async #retry (info: RetryInfo, signal: AbortSignal | undefined): Promise<void> {
    this.#options.onRetry?.(info)
    await sleep(info.delayMs, signal)
  }

  /** Keeps the entry as the most recent, dropping the least recently used past the bound. */
  #remember (key: string, entry: Remembered): void {
    this.#remembered.delete(key)
    if (this.#options.cacheEntries <= 0) return
    this.#remembered.set(key, entry)
    if (this.#remembered.size > this.#options.cacheEntries) {
      this.#remembered.delete(this.#remembered.keys().next().value as string)
    }
  }
}
