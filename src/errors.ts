// Domain errors. Each carries an error code of one of two typed vocabularies (a code in neither is
// a compile error): the HTTP API's, which the one error handler maps to a status, and the
// library's own refusals, which only the CLI and a bot see. The CLI prints their message.
import type { ErrorCode } from './http/error-codes.js'
import type { ImportProblem } from './transfer/import-problem.js'

/** Codes of the library's refusals that the read API never sends: the CLI and a bot act on them. */
export const LIBRARY_ERROR_CODES = [
  'xp_limit', 'already_claimed', 'before_last_claim', 'in_future', 'invalid_import_file', 'import_refused', 'api_key_not_found', 'api_key_inactive',
  'token_not_found'
] as const

export type LibraryErrorCode = typeof LIBRARY_ERROR_CODES[number]
export type LeaderboardErrorCode = ErrorCode | LibraryErrorCode

export class LeaderboardError<Code extends LeaderboardErrorCode = LeaderboardErrorCode> extends Error {
  readonly code: Code
  constructor (code: Code, message: string) {
    super(message)
    this.name = new.target.name
    this.code = code
  }
}

/** An input that breaks the contract's rules (bad id, out-of-range number, unknown curve…). */
export class InvalidParameterError extends LeaderboardError<'invalid_parameter'> {
  constructor (message: string) { super('invalid_parameter', message) }
}

export class MemberNotFoundError extends LeaderboardError<'member_not_found'> {
  constructor (guildId: string, userId: string) {
    super('member_not_found', `user ${userId} is not a member of server ${guildId}`)
  }
}

/** A season that was never started, or is past the server's season_retention. */
export class SeasonNotFoundError extends LeaderboardError<'season_not_found'> {
  constructor (guildId: string, season: 'current' | number | undefined) {
    super('season_not_found', `server ${guildId} keeps no season ${String(season)}: seasons are numbered from 1, and only the last season_retention ended ones are kept`)
  }
}

/** An award that would lift a member past MAX_XP; nothing was changed. */
export class XpLimitError extends LeaderboardError<'xp_limit'> {
  constructor (message: string) { super('xp_limit', message) }
}

export type DailyRefusal = 'already_claimed' | 'before_last_claim' | 'in_future'

/** A daily claim the rules refuse; nothing was changed. */
export class DailyClaimRefusedError extends LeaderboardError<DailyRefusal> {
  readonly reason: DailyRefusal
  /** The member's last claim (already_claimed, before_last_claim), or the service's clock (in_future). */
  readonly at: Date | undefined
  constructor (reason: DailyRefusal, message: string, at?: Date) {
    super(reason, message)
    this.reason = reason
    this.at = at
  }
}

/** An import file that cannot be read as a whole (not JSON, no CSV header naming the columns…). */
export class ImportFileError extends LeaderboardError<'invalid_import_file'> {
  constructor (message: string) { super('invalid_import_file', message) }
}

/** A strict import that met bad rows: nothing was written. `problems` holds the first few. */
export class ImportRefusedError extends LeaderboardError<'import_refused'> {
  readonly skipped: number
  readonly problems: readonly ImportProblem[]
  constructor (message: string, skipped: number, problems: readonly ImportProblem[]) {
    super('import_refused', message)
    this.skipped = skipped
    this.problems = problems
  }
}

export class ApiKeyNotFoundError extends LeaderboardError<'api_key_not_found'> {
  constructor (id: string) { super('api_key_not_found', `no API key with id ${id}`) }
}

/** A public board's slug another server of the installation holds; nothing was changed. */
export class SlugTakenError extends LeaderboardError<'slug_taken'> {
  constructor (slug: string) { super('slug_taken', `the public slug ${JSON.stringify(slug)} belongs to another server; choose another`) }
}

/** A public board's slug that names no public board (unknown, or its server is not public). */
export class BoardNotFoundError extends LeaderboardError<'board_not_found'> {
  constructor (slug: string) { super('board_not_found', `no public board is at ${JSON.stringify(slug)}`) }
}

/** A change (rotation, plan) asked of a key that was revoked or has expired; nothing was changed. */
export class ApiKeyInactiveError extends LeaderboardError<'api_key_inactive'> {
  constructor (message: string) { super('api_key_inactive', message) }
}

export class WebhookNotFoundError extends LeaderboardError<'webhook_not_found'> {
  constructor (guildId: string, id: string) { super('webhook_not_found', `server ${guildId} has no webhook with id ${id}`) }
}

/** A ping asked of a webhook that was disabled (its receiver answered 410 Gone). */
export class WebhookDisabledError extends LeaderboardError<'webhook_disabled'> {
  constructor (id: string, disabledAt: Date) {
    super('webhook_disabled', `webhook ${id} was disabled at ${disabledAt.toISOString()} (its receiver answered 410 Gone); delete it and create it again`)
  }
}

// Errors of the HTTP API's authentication and limits.

export class MissingApiKeyError extends LeaderboardError<'missing_api_key'> {
  constructor () { super('missing_api_key', 'the x-api-key header is required') }
}

export class InvalidApiKeyError extends LeaderboardError<'invalid_api_key'> {
  constructor () { super('invalid_api_key', 'the API key is unknown, revoked or expired') }
}

export class ForbiddenError extends LeaderboardError<'forbidden'> {
  constructor (guildId: string) { super('forbidden', `this API key does not belong to server ${guildId}`) }
}

export class MissingTokenError extends LeaderboardError<'missing_token'> {
  constructor () { super('missing_token', 'the Authorization header must be "Bearer <token>"') }
}

export class InvalidTokenError extends LeaderboardError<'invalid_token'> {
  constructor () { super('invalid_token', 'the token is unknown or revoked') }
}

/** A write-API request its token does not allow (a server or a scope it lacks). */
export class NotPermittedError extends LeaderboardError<'forbidden'> {
  constructor (message: string) { super('forbidden', message) }
}

/** A second daily claim on the same UTC day, over HTTP: `nextClaimAt` is the next UTC midnight. */
export class DailyAlreadyClaimedError extends LeaderboardError<'daily_already_claimed'> {
  readonly nextClaimAt: Date
  readonly retryAfterSeconds: number
  constructor (message: string, nextClaimAt: Date, retryAfterSeconds: number) {
    super('daily_already_claimed', message)
    this.nextClaimAt = nextClaimAt
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** An Idempotency-Key used again with another request body. */
export class IdempotencyKeyReusedError extends LeaderboardError<'idempotency_key_reused'> {
  constructor () { super('idempotency_key_reused', 'this Idempotency-Key was used with another request within 10 minutes; use a new key for a new request') }
}

/** An Idempotency-Key whose first request is still running. */
export class IdempotencyKeyInUseError extends LeaderboardError<'idempotency_key_in_use'> {
  readonly retryAfterSeconds = 1
  constructor () { super('idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed; retry in 1 s') }
}

export class RateLimitedError extends LeaderboardError<'rate_limited'> {
  readonly retryAfterSeconds: number
  constructor (message: string, retryAfterSeconds: number) {
    super('rate_limited', message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** Redis cannot serve now (down, too slow, or refusing: OOM, BUSY…), or the instance is closing. */
export class ServiceUnavailableError extends LeaderboardError<'service_unavailable'> {
  readonly retryAfterSeconds: number
  constructor (message: string, retryAfterSeconds: number) {
    super('service_unavailable', message)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/**
 * A write whose outcome the writer could not learn: Redis stayed unreachable (or kept refusing
 * "not now") for the writer's whole settle timeout. It may or may not have been applied; calling
 * again with `opId` is safe either way (applied once, the first result returned).
 */
export class WriteOutcomeUnknownError extends ServiceUnavailableError {
  /** The operation id to retry with; undefined for a write that is safe to repeat as it is (settings). */
  readonly opId: string | undefined
  readonly operation: string
  constructor (operation: string, opId: string | undefined, settleTimeoutMs: number, cause: unknown) {
    super(`${operation}${opId === undefined ? '' : ` (operation id ${opId})`}: no answer from Redis within ${settleTimeoutMs} ms; ` +
      `it may or may not have been applied: ${opId === undefined ? 'call it again' : 'retry with the same opId'} (${cause instanceof Error ? cause.message : String(cause)})`, 1)
    this.opId = opId
    this.operation = operation
    this.cause = cause
  }
}
