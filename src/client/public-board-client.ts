// A typed client of public boards (`/public/v1/{slug}/…`): the leaderboard, member and stats reads
// and their live updates that a server opted in to serve with no key, for a widget, a website or
// a bot with no key of the server. The same answers as the keyed reads, the same revalidation and
// retries (read-transport.ts); no key is sent, and a request counts against the client address's
// public limit. Generated methods: ./endpoints.ts (`npm run client-types`).
import type { ApiResult, CallOptions, Query } from './call.js'
import { id } from './call.js'
import { PublicReadEndpoints } from './endpoints.js'
import type { RateLimit } from './api-error.js'
import type { LiveUpdate, WatchOptions } from './live-stream.js'
import { ReadTransport, type TransportOptions } from './read-transport.js'

export interface PublicBoardClientOptions extends TransportOptions {
  /** The public boards' root, e.g. `https://leaderboard.example.com/public/v1`. */
  baseUrl: string
}

export class PublicBoardClient extends PublicReadEndpoints {
  readonly #transport: ReadTransport
  readonly #baseUrl: string

  constructor ({ baseUrl, ...options }: PublicBoardClientOptions) {
    super()
    this.#baseUrl = baseUrl.replace(/\/+$/, '')
    this.#transport = new ReadTransport(this.#baseUrl, undefined, options)
  }

  /** The client address's public quota as of the last response seen (an error's included). */
  get rateLimit (): RateLimit | undefined {
    return this.#transport.rateLimit
  }

  /** The address of a member's rank card (an SVG image, 600 × 160), for an `<img>` or a bot's embed; nothing is fetched. */
  cardUrl (slug: string, userId: string): string {
    return `${this.#baseUrl}/${id(slug)}/members/${id(userId)}/card.svg`
  }

  protected async get<T> (path: string, query: Query, options: CallOptions): Promise<ApiResult<T>> {
    return await this.#transport.get(path, query, options)
  }

  protected watch<T> (path: string, query: Query, event: string, options: WatchOptions): AsyncGenerator<LiveUpdate<T>, void, undefined> {
    return this.#transport.watch(path, query, event, options)
  }
}
