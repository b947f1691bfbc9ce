// A typed client of the read API for dashboards and bots: one method per endpoint, ETag
// revalidation (a 304 is free of quota) and retry-after handled for the caller. Dependency-free:
// global fetch only, so it runs on Node 20+ and in browsers alike. Every request goes through
// #get; a new endpoint is one line.
import type { AroundPage, GuildStats, LeaderboardPage, MemberList, MemberRecord, Period } from './types.js'
import { LeaderboardApiError, rateLimitOf, retryAfterOf, type RateLimit } from './api-error.js'

export interface LeaderboardClientOptions {
  /** The API's root, e.g. `https://leaderboard.example.com/api/v1`. */
  baseUrl: string
  apiKey: string
  /** A fetch of your own (a proxy agent, instrumentation); the global one by default. */
  fetch?: typeof fetch
  /** Time allowed for each attempt, in ms (10 s). */
  timeoutMs?: number
  /** Retries of a 429 or 503 that carries retry-after (2). */
  maxRetries?: number
  /** The longest retry-after waited for, in ms (60 s); a longer one is thrown at once. */
  maxRetryWaitMs?: number
  /** URLs whose last ETag and body are kept for revalidation (100). */
  cacheEntries?: number
}

/** Per call: a signal that aborts the request, and any retry wait, with its reason. */
export interface CallOptions {
  signal?: AbortSignal
}

/** What every method resolves to. */
export interface ApiResult<T> {
  /** The body: fresh, or the one remembered for this URL when `notModified`. */
  data: T
  /** True when the service answered 304: nothing changed since the last call of this URL. */
  notModified: boolean
  /** The key's quota as of this response. */
  rateLimit: RateLimit | undefined
}

interface Remembered { etag: string, data: unknown }

type Query = Record<string, string | number | undefined>

export class LeaderboardClient {
  /** The quota as of the last response seen (an error's included). */
  rateLimit: RateLimit | undefined
  readonly #options: Required<Omit<LeaderboardClientOptions, 'fetch'>> & { fetch: typeof fetch }
  readonly #remembered = new Map<string, Remembered>()

  constructor (options: LeaderboardClientOptions) {
    this.#options = {
      timeoutMs: 10_000,
      maxRetries: 2,
      maxRetryWaitMs: 60_000,
      cacheEntries: 100,
      ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis)
    }
  }

  /** A page of the board: all time, or XP gained in a `period`. */
  async leaderboard (guildId: string, options: CallOptions & { limit?: number, page?: number, period?: Period } = {}): Promise<ApiResult<LeaderboardPage>> {
    return await this.#get(`servers/${id(guildId)}/leaderboard`, { limit: options.limit, page: options.page, period: options.period }, options)
  }

  /** One member's record; a non-member throws `member_not_found`. */
  async member (guildId: string, userId: string, options: CallOptions = {}): Promise<ApiResult<MemberRecord>> {
    return await this.#get(`servers/${id(guildId)}/members/${id(userId)}`, {}, options)
  }

  /** The ranks within `radius` (5) of a member's. */
  async around (guildId: string, userId: string, options: CallOptions & { radius?: number } = {}): Promise<ApiResult<AroundPage>> {
    return await this.#get(`servers/${id(guildId)}/members/${id(userId)}/around`, { radius: options.radius }, options)
  }

  /** Up to 100 members' records in one request; ids that are not members come back in `missing`. */
  async members (guildId: string, userIds: readonly string[], options: CallOptions = {}): Promise<ApiResult<MemberList>> {
    return await this.#get(`servers/${id(guildId)}/members`, { ids: userIds.join(',') }, options)
  }

  async stats (guildId: string, options: CallOptions = {}): Promise<ApiResult<GuildStats>> {
    return await this.#get(`servers/${id(guildId)}/stats`, {}, options)
  }

  async #get<T> (path: string, query: Query, { signal }: CallOptions): Promise<ApiResult<T>> {
    const url = new URL(`${this.#options.baseUrl}/${path}`)
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value))
    }
    const key = url.toString()
    for (let attempt = 0; ; attempt++) {
      const remembered = this.#remembered.get(key)
      const headers: Record<string, string> = { accept: 'application/json', 'x-api-key': this.#options.apiKey }
      if (remembered !== undefined) headers['if-none-match'] = remembered.etag
      const timeout = AbortSignal.timeout(this.#options.timeoutMs)
      const response = await this.#options.fetch(key, {
        headers, signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout])
      })
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
      const wait = retryAfterOf(response.headers)
      if ((response.status === 429 || response.status === 503) && wait !== undefined &&
          attempt < this.#options.maxRetries && wait * 1000 <= this.#options.maxRetryWaitMs) {
        await response.body?.cancel()
        await sleep(wait * 1000, signal)
        continue
      }
      throw await LeaderboardApiError.fromResponse(response)
    }
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

function id (value: string): string {
  return encodeURIComponent(value)
}

async function sleep (ms: number, signal: AbortSignal | undefined): Promise<void> {
  signal?.throwIfAborted()
  await new Promise<void>((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
