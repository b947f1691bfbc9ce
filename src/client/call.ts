// What every call of the client takes and gives, shared by the client (leaderboard-client.ts) and
// its generated endpoint methods (endpoints.ts).
import type { RateLimit } from './api-error.js'

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

/** A request's query; undefined values are left out. */
export type Query = Record<string, string | number | undefined>

/** A path segment: an id, encoded. */
export function id (value: string): string {
  return encodeURIComponent(value)
}
