// Domain errors. Each carries an error code of one of two typed vocabularies (a code in neither is
// a compile error): the HTTP API's, which the one error handler maps to a status, and the
// library's own refusals, which only the CLI and a bot see. The CLI prints their message.
import type { ErrorCode } from './http/error-codes.js'
import type { ImportProblem } from './transfer/import-problem.js'

/** Codes of the library's refusals that the read API never sends: the CLI and a bot act on them. */
export const LIBRARY_ERROR_CODES = [
  'xp_limit', 'already_claimed', 'before_last_claim', 'in_future', 'invalid_import_file', 'import_refused', 'api_key_not_found', 'api_key_inactive'
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

/** An award that would lift a member past MAX_XP; nothing was changed. */
export class XpLimitError extends LeaderboardError<'xp_limit'> {
  constructor (message: string) { super('xp_limit', message) }
}

export type DailyRefusal = 'already_claimed' | 'before_last_claim' | 'in_future'

/** A daily claim the rules refuse; nothing was changed. */
export class DailyClaimRefusedError extends LeaderboardError<DailyRefusal> {
  readonly reason: DailyRefusal
  constructor (reason: DailyRefusal, message: string) {
    super(reason, message)
    this.reason = reason
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

/** A change (rotation, plan) asked of a key that was revoked or has expired; nothing was changed. */
export class ApiKeyInactiveError extends LeaderboardError<'api_key_inactive'> {
  constructor (message: string) { super('api_key_inactive', message) }
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
