// The `response` entries of a route, by status: each names its body schema by `$ref` (see
// common.ts) and lists the headers it carries (headers.ts). Only the OpenAPI document reads
// `description` and `headers`; the serializer reads the reference.
import { type Static, Type } from 'typebox'
import { ApiError, type NamedSchema } from './common.js'
import { type ResponseHeaders, responseHeaders } from './headers.js'

/** A response whose body is the named schema `body`, typed as that body. */
export function response<T extends NamedSchema> (body: T, description: string, headers: ResponseHeaders) {
  return Type.Unsafe<Static<T>>({ $ref: `${body.$id}#`, description, headers })
}

/** A response with no body. */
function emptyResponse (description: string, headers: ResponseHeaders) {
  return Type.Unsafe<undefined>({ type: 'null', description, headers })
}

const errorResponse = (description: string, headers: ResponseHeaders) => response(ApiError, description, headers)

/** 200 with `body`, and 304 for a conditional request whose ETag is current. */
export function readResponses<T extends NamedSchema> (body: T, description: string) {
  return {
    200: response(body, description, responseHeaders.read),
    304: emptyResponse('Not Modified: the If-None-Match header holds the current ETag; no body, and not counted against the quota', responseHeaders.read)
  }
}

/** What the HTTP layer can refuse on any route, before or beside the route's own checks. */
const httpLayerErrors = {
  '4xx': errorResponse('Refused by the HTTP layer: `bad_request` (400, a malformed request), `request_timeout` (408, ' +
    'not received within the request timeout), `payload_too_large` (413, a body over 16 KiB), `headers_too_large` ' +
    '(431, request line and headers over 16 KiB)', responseHeaders.uncounted)
}

/** The errors every read endpoint can answer; the description names the codes of each status. */
export const errorResponses = {
  ...httpLayerErrors,
  400: errorResponse('`invalid_parameter`: a path or query parameter out of its bounds (the message names it), counted ' +
    'and with the x-ratelimit-* headers; or a URL that is not valid at all (bad percent-encoding), refused before the key ' +
    'is checked, without them. (`bad_request`: see 4XX.)', responseHeaders.invalid),
  401: errorResponse('`missing_api_key` or `invalid_api_key` (unknown, revoked or expired)', responseHeaders.uncounted),
  403: errorResponse('`forbidden`: the key belongs to another server', responseHeaders.counted),
  429: errorResponse("`rate_limited`: the key's plan limit, or too many failed authentications from the client's address", responseHeaders.rateLimited),
  500: errorResponse('`internal_error`', responseHeaders.uncounted),
  503: errorResponse('`service_unavailable`: Redis cannot serve now, or the instance is overloaded or shutting down', responseHeaders.unavailable)
}

export const memberNotFound = {
  404: errorResponse('`member_not_found`: the user is not a member of that server', responseHeaders.counted)
}

/** 200 with `body`, and 304, on a public board (no key: counted per client address, 304s too). */
export function publicReadResponses<T extends NamedSchema> (body: T, description: string) {
  return {
    200: response(body, description, responseHeaders.read),
    304: emptyResponse("Not Modified: the If-None-Match header holds the current ETag; no body (counted against the address's limit like any request)", responseHeaders.read)
  }
}

/** The errors every public board's read can answer; `notFound` adds to the 404's codes (a member's). */
export function publicErrorResponses (notFound?: string) {
  return {
    ...httpLayerErrors,
    400: errorResponse('`invalid_parameter`: a path or query parameter out of its bounds (the message names it)', responseHeaders.invalid),
    404: errorResponse(`\`board_not_found\`: no server's public board has this slug (unknown, or the server is not public)${notFound === undefined ? '' : `; ${notFound}`}`, responseHeaders.counted),
    429: errorResponse('`rate_limited`: more than PUBLIC_LIMIT_PER_MINUTE requests to public boards from the client\'s address in the last minute', responseHeaders.rateLimited),
    500: errorResponse('`internal_error`', responseHeaders.uncounted),
    503: errorResponse('`service_unavailable`: Redis cannot serve now, or the instance is overloaded or shutting down', responseHeaders.unavailable)
  }
}

export const seasonNotFound = {
  404: errorResponse('`season_not_found`: the server has no such season, or no longer keeps it (season_retention)', responseHeaders.counted)
}

/** A read of one member that may name a season. */
export const memberOrSeasonNotFound = {
  404: errorResponse('`member_not_found`: the user is not on the board read (not a member of that server; with `season`, no XP ' +
    'gained in that season); `season_not_found`: the server has no such season, or no longer keeps it (season_retention)', responseHeaders.counted)
}

/** The errors of /healthz and /readyz. */
export function serviceErrors (unavailable: string) {
  return { ...httpLayerErrors, 503: errorResponse(`\`service_unavailable\`: ${unavailable}`, responseHeaders.unavailable) }
}
