// What the client makes of a response's headers and of an error answer. No runtime imports, so
// the client runs wherever fetch does (Node 20+, browsers, workers).
import type { ErrorCode } from './types.js'

/** An error body's code, or `http_<status>` for an answer not in the API's shape (a proxy's 502 page, say). */
export type ApiErrorCode = ErrorCode | `http_${number}`

/** The key's quota as of one response, from its `x-ratelimit-*` headers. */
export interface RateLimit {
  /** The key's limit per window. */
  limit: number
  /** Requests still admitted now. */
  remaining: number
  /** Seconds until the count falls; on a 429, until a request would be admitted. */
  resetSeconds: number
}

/** The rate-limit headers of a response, or undefined when it has none (e.g. a 401). */
export function rateLimitOf (headers: Headers): RateLimit | undefined {
  const limit = headers.get('x-ratelimit-limit')
  const remaining = headers.get('x-ratelimit-remaining')
  const reset = headers.get('x-ratelimit-reset')
  if (limit === null || remaining === null || reset === null) return undefined
  return { limit: Number(limit), remaining: Number(remaining), resetSeconds: Number(reset) }
}

/** `retry-after` in whole seconds (the only form the service sends), or undefined. */
export function retryAfterOf (headers: Headers): number | undefined {
  const value = headers.get('retry-after')?.trim()
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined
}

/**
 * An error answer of the API: `{ statusCode, error, code, message }`. A body without that shape
 * (a proxy's HTML page, say) gets the code `http_<status>` and the status text as its message.
 */
export class LeaderboardApiError extends Error {
  readonly statusCode: number
  /** The contract's code: `invalid_parameter`, `missing_api_key`, `rate_limited`… */
  readonly code: ApiErrorCode
  /** The `retry-after` of a 429 or 503, in seconds. */
  readonly retryAfterSeconds: number | undefined
  readonly rateLimit: RateLimit | undefined
  /** The request's id (the service's `x-request-id`, or the one the client sent): quote it to find the request in the service's logs. */
  readonly requestId: string | undefined

  constructor (statusCode: number, code: ApiErrorCode, message: string, retryAfterSeconds?: number, rateLimit?: RateLimit, requestId?: string) {
    super(message)
    this.name = 'LeaderboardApiError'
    this.statusCode = statusCode
    this.code = code
    this.retryAfterSeconds = retryAfterSeconds
    this.rateLimit = rateLimit
    this.requestId = requestId
  }

  static async fromResponse (response: Response, sentRequestId?: string): Promise<LeaderboardApiError> {
    const text = await response.text().catch(() => '')
    let body: { code?: unknown, message?: unknown } = {}
    try { body = JSON.parse(text) as typeof body } catch {}
    // Trusted as one of the API's codes when the body has the API's error shape.
    const code = typeof body?.code === 'string' ? body.code as ErrorCode : `http_${response.status}` as const
    const message = typeof body?.message === 'string' ? body.message : `${response.status} ${response.statusText}`.trim()
    return new LeaderboardApiError(response.status, code, message, retryAfterOf(response.headers), rateLimitOf(response.headers),
      response.headers.get('x-request-id') ?? sentRequestId)
  }
}
