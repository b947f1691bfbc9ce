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
  board_not_found: 404,
  season_not_found: 404,
  not_found: 404,
  request_timeout: 408,
  payload_too_large: 413,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  service_unavailable: 503
} as const satisfies Record<string, number>

/** The codes only the write API (ADMIN_PORT, src/admin/) sends, beside the ones above; its document lists both. */
export const ADMIN_STATUS_BY_CODE = {
  missing_token: 401,
  invalid_token: 401,
  api_key_not_found: 404,
  webhook_not_found: 404,
  daily_already_claimed: 409,
  webhook_disabled: 409,
  api_key_inactive: 409,
  slug_taken: 409,
  idempotency_key_in_use: 409,
  invalid_import_file: 400,
  unsupported_media_type: 415,
  import_refused: 422,
  idempotency_key_reused: 422
} as const satisfies Record<string, number>

/** The read API's codes: its OpenAPI document lists exactly these. */
export type PublicErrorCode = keyof typeof STATUS_BY_CODE
export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as PublicErrorCode[]

export type ErrorCode = PublicErrorCode | keyof typeof ADMIN_STATUS_BY_CODE
const ALL_STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = { ...STATUS_BY_CODE, ...ADMIN_STATUS_BY_CODE }
export const ADMIN_ERROR_CODES = Object.keys(ALL_STATUS_BY_CODE) as ErrorCode[]

export function statusOfCode (code: ErrorCode): number {
  return ALL_STATUS_BY_CODE[code]
}

export function isErrorCode (code: string): code is ErrorCode {
  return Object.hasOwn(ALL_STATUS_BY_CODE, code)
}
