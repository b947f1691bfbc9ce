// Every error code the HTTP API can send, with its status. The error handler, the raw answers
// to malformed requests (client-errors.ts) and the OpenAPI document's `Error` schema (its `code`
// enum) all read this one table, so the document lists exactly the codes clients can get.
export const STATUS_BY_CODE = {
  bad_request: 400,
  invalid_parameter: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  forbidden: 403,
  member_not_found: 404,
  not_found: 404,
  request_timeout: 408,
  payload_too_large: 413,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503
} as const satisfies Record<string, number>

export type ErrorCode = keyof typeof STATUS_BY_CODE

export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as ErrorCode[]

export function isErrorCode (code: string): code is ErrorCode {
  return Object.hasOwn(STATUS_BY_CODE, code)
}
