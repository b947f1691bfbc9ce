// Request and response headers of the API, as the OpenAPI document lists them. A response
// header that every response of its status carries is marked `required: true` (a field of the
// document's Header Object, lifted there by plugins/openapi.ts); test/openapi.test.ts checks
// live responses against these.
import { type TSchema, Type } from 'typebox'

export type ResponseHeaders = Record<string, TSchema>

/** A client's x-request-id is used only when it matches this (app.ts). */
export const REQUEST_ID_PATTERN = '^[A-Za-z0-9._:-]{1,128}$'

/** Conditional requests and request ids; the API key is the security scheme's. */
export const ReadRequestHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({
    description: 'ETags of bodies the client holds (a list, or W/ forms): a current one gets 304 Not Modified, which costs no quota'
  })),
  'x-request-id': Type.Optional(Type.String({
    description: `Your id for this request, echoed back and logged when it matches \`${REQUEST_ID_PATTERN}\`; otherwise the service makes one`
  }))
})

const requestId = {
  'x-request-id': Type.String({ pattern: REQUEST_ID_PATTERN, required: true, description: "The request's id: yours when valid, else a new UUID" })
}

function rateLimit (required: boolean): ResponseHeaders {
  return {
    'x-ratelimit-limit': Type.Integer({ minimum: 1, required, description: "Requests allowed per window by the key's plan" }),
    'x-ratelimit-remaining': Type.Integer({ minimum: 0, required, description: 'Requests the key may still make in the current window' }),
    'x-ratelimit-reset': Type.Integer({ minimum: 0, required, description: 'Seconds until the count falls (the oldest counted requests leave the window); on a 429, until a request would be admitted' })
  }
}

const caching = {
  etag: Type.String({ pattern: '^"[^"]+"$', required: true, description: 'Strong entity tag of the body; send it back in If-None-Match' }),
  'cache-control': Type.Literal('private, no-cache', { required: true, description: 'Keep the body, but revalidate before using it' })
}

const retryAfter = {
  'retry-after': Type.Integer({ minimum: 1, required: true, description: 'Whole seconds to wait before retrying' })
}

/** Headers by the kind of response they come with. */
export const responseHeaders = {
  /** 200 and 304 of a read endpoint. */
  read: { ...requestId, ...rateLimit(true), ...caching },
  /** An error after the request was counted (403, 404). */
  counted: { ...requestId, ...rateLimit(true) },
  /** 400: counted, unless the URL itself is malformed (refused before the key is checked). */
  invalid: { ...requestId, ...rateLimit(false) },
  /** An error before the request was counted (401, 500). */
  uncounted: requestId,
  /** 429: retry-after; the x-ratelimit-* headers when it is the key's plan limit (not the failed-authentication limit). */
  rateLimited: { ...requestId, ...retryAfter, ...rateLimit(false) },
  /** 503. */
  unavailable: { ...requestId, ...retryAfter },
  /** /healthz, /readyz. */
  service: requestId
} satisfies Record<string, ResponseHeaders>
