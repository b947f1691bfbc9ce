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
  // A redirection still answered after followingRedirects' tries: the resharding moves on meanwhile.
  ASK: 1,
  MOVED: 1
}

/**
 * Replies that mean the command did not run where it was sent and would run if sent again: a
 * Redis Cluster redirecting during a resharding (`ASK`, `MOVED`), and a node that does not have
 * a script yet (`NOSCRIPT`, after a slot moved to it); and ioredis refusing, before sending it, an
 * auto-pipeline whose keys the moving slot map split between nodes. ioredis follows redirections
 * for a command on its own, but not for one answered inside an auto-pipeline whose other
 * commands succeeded.
 */
const REDIRECTED = /^(ASK|MOVED|NOSCRIPT) |^All keys in the pipeline should belong to the same slots allocation group/
const REDIRECT_TRIES = 5

/** `send()`, sent again (a fresh command each time) while Redis answers it with a redirection. */
export async function followingRedirects<T> (send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send()
    } catch (err) {
      if (attempt >= REDIRECT_TRIES || !(err instanceof Error) || !REDIRECTED.test(err.message)) throw err
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt))
    }
  }
}

/** Retry-after for a Redis that does not answer at all (down, unreachable, too slow). */
export const UNREACHABLE_RETRY_AFTER_SECONDS = 1

const TIMEOUT = /Command timed out/
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
