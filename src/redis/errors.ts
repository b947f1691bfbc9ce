// Telling "Redis is unreachable or too slow" (a 503) apart from a real bug (a 500).
import type { RedisClient } from './client.js'

const UNAVAILABLE_MESSAGES = /Command timed out|Stream isn't writeable|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|None of startup nodes is available|Failed to refresh slots cache|CLUSTERDOWN|LOADING|TRYAGAIN|MASTERDOWN/
const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError'])

export function isRedisUnavailable (error: unknown, client?: RedisClient): boolean {
  if (!(error instanceof Error)) return false
  if (UNAVAILABLE_NAMES.has(error.name) || UNAVAILABLE_MESSAGES.test(error.message)) return true
  // Any failure while the connection is down is the outage's doing, not the request's.
  return client !== undefined && client.status !== 'ready' && error.name !== 'ReplyError'
}
