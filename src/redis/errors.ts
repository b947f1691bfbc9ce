// The one classification of Redis failures. "Not now" (Redis unreachable, too slow, or refusing
// for a reason that passes: OOM, BUSY, LOADING, failover...) is a 503 with retry-after; any
// other error (a bug, a bad script, a wrong password) stays a 500 with details in the log.
import type { RedisClient } from './client.js'

/** Why Redis cannot serve now, and how long a client should wait before trying again. */
export interface Unavailability {
  /** The Redis error code (`OOM`, `BUSY`…), or `unreachable` / `timeout`. */
  reason: string
  retryAfterSeconds: number
}

/**
 * Refusals Redis answers with an error code that means "not now", and the retry-after each
 * gets: a second for what passes by itself (a long script, a resharding, a failover), five for
 * what needs memory freed, a dataset loaded or an operator (OOM, LOADING, READONLY, MISCONF).
 */
export const NOT_NOW_REPLIES: Readonly<Record<string, number>> = {
  OOM: 5,
  BUSY: 1,
  LOADING: 5,
  READONLY: 5,
  MISCONF: 5,
  MASTERDOWN: 1,
  CLUSTERDOWN: 1,
  TRYAGAIN: 1,
  NOREPLICAS: 1,
  // A redirection still answered after the resends (./redirects.ts): the resharding moves on meanwhile.
  ASK: 1,
  MOVED: 1
}

/** Retry-after for a Redis that does not answer at all (down, unreachable, too slow). */
export const UNREACHABLE_RETRY_AFTER_SECONDS = 1

const TIMEOUT = /Command timed out/
/**
 * ioredis giving up on a resharding under way: it followed as many redirections as it follows
 * (not now when the last reply was, with its code), or it refused, before sending any, an
 * auto-pipeline whose commands a slot map refreshed since they were queued puts on different nodes.
 */
const STILL_MOVING = /^Too many Cluster redirections\. Last error: (?:ReplyError: )?([A-Z]+)|^All keys in the pipeline should belong to the same slots allocation group/
const UNREACHABLE_MESSAGES = /Stream isn't writeable|Connection is closed|Cluster isn't ready|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EPIPE|None of startup nodes is available|Failed to refresh slots cache/
// AbortError: ioredis's answer to the commands of an auto-pipeline that a dropped connection left unanswered.
const UNREACHABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError', 'AbortError'])

/** The "not now" reading of `error`, or null when it is something else (a 500). */
export function redisUnavailability (error: unknown, client?: RedisClient): Unavailability | null {
  if (!(error instanceof Error)) return null
  if (error.name === 'ReplyError') {
    // Redis puts the code first, also in an error raised by a script's redis.call.
    const code = /^[A-Z]+/.exec(error.message)?.[0] ?? ''
    const retryAfterSeconds = NOT_NOW_REPLIES[code]
    return retryAfterSeconds === undefined ? null : { reason: code, retryAfterSeconds }
  }
  if (TIMEOUT.test(error.message)) return { reason: 'timeout', retryAfterSeconds: UNREACHABLE_RETRY_AFTER_SECONDS }
  const moving = STILL_MOVING.exec(error.message)
  if (moving !== null) {
    const reason = moving[1] ?? 'MOVED'
    const retryAfterSeconds = NOT_NOW_REPLIES[reason]
    if (retryAfterSeconds !== undefined) return { reason, retryAfterSeconds }
  }
  if (UNREACHABLE_NAMES.has(error.name) || UNREACHABLE_MESSAGES.test(error.message) ||
    // Any other failure while the connection is down is the outage's doing, not the request's.
    (client !== undefined && client.status !== 'ready')) {
    return { reason: 'unreachable', retryAfterSeconds: UNREACHABLE_RETRY_AFTER_SECONDS }
  }
  return null
}

export function isRedisUnavailable (error: unknown, client?: RedisClient): boolean {
  return redisUnavailability(error, client) !== null
}
