// A typed client of the read API for dashboards and bots: one method per endpoint, ETag
// revalidation (a 304 is free of quota), and retries of what passes, with backoff and jitter
// (read-transport.ts). Live updates (watch…) read the API's streams (live-stream.ts).
// Dependency-free: global fetch only, so it runs on Node 20+ and in browsers alike. The methods
// of the read endpoints are generated from their declarations (./endpoints.ts, `npm run client-types`).
import type { KeyInfo } from './types.js'
import type { ApiResult, CallOptions, Query } from './call.js'
import { ReadEndpoints } from './endpoints.js'
import type { RateLimit } from './api-error.js'
import type { LiveUpdate, WatchOptions } from './live-stream.js'
import { ReadTransport, type TransportOptions } from './read-transport.js'

export type { ApiResult, CallOptions } from './call.js'
export type { RetryInfo, TransportOptions } from './read-transport.js'

export interface LeaderboardClientOptions extends TransportOptions {
  /** The API's root, e.g. `https://leaderboard.example.com/api/v1`. */
  baseUrl: string
  apiKey: string
}

export class LeaderboardClient extends ReadEndpoints {
  readonly #transport: ReadTransport

  constructor ({ baseUrl, apiKey, ...options }: LeaderboardClientOptions) {
    super()
    this.#transport = new ReadTransport(baseUrl, apiKey, options)
  }

  /** The quota as of the last response seen (an error's included). */
  get rateLimit (): RateLimit | undefined {
    return this.#transport.rateLimit
  }

  /** The key in use: its plan and the servers it reads (a dashboard's list of servers to show). */
  async me (options: CallOptions = {}): Promise<ApiResult<KeyInfo>> {
    return await this.get('me', {}, options)
  }

  protected async get<T> (path: string, query: Query, options: CallOptions): Promise<ApiResult<T>> {
    return await this.#transport.get(path, query, options)
  }

  protected watch<T> (path: string, query: Query, event: string, options: WatchOptions): AsyncGenerator<LiveUpdate<T>, void, undefined> {
    return this.#transport.watch(path, query, event, options)
  }
}
