// Which servers a credential (an API key or a write-API token) may use: one server, a list of
// up to MAX_SCOPE_SERVERS, or every server of the installation ('*').
import { InvalidParameterError } from '../errors.js'
import { assertSnowflake } from '../validation.js'

export type ServerScope = '*' | readonly string[]

export const ALL_SERVERS = '*' as const
export const MAX_SCOPE_SERVERS = 1000

/** A checked scope: '*', or 1..MAX_SCOPE_SERVERS distinct snowflakes (duplicates dropped, order kept). */
export function assertServerScope (value: unknown): ServerScope {
  if (value === ALL_SERVERS) return ALL_SERVERS
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidParameterError(`servers must be "*" or a list of 1 to ${MAX_SCOPE_SERVERS} server ids`)
  }
  const ids = [...new Set(value.map((id) => assertSnowflake('each server id', id)))]
  if (ids.length > MAX_SCOPE_SERVERS) throw new InvalidParameterError(`servers may list at most ${MAX_SCOPE_SERVERS} server ids`)
  return ids
}

/** The scope as stored in a record's `servers` field. */
export function encodeServerScope (scope: ServerScope): string {
  return scope === ALL_SERVERS ? ALL_SERVERS : scope.join(',')
}

/** A stored scope: `guild_id` for a one-server record, else the `servers` field; null when neither is sane. */
export function decodeServerScope (guildId: unknown, servers: unknown): ServerScope | null {
  if (typeof guildId === 'string' && guildId !== '') return [guildId]
  if (servers === ALL_SERVERS) return ALL_SERVERS
  return typeof servers === 'string' && servers !== '' ? servers.split(',') : null
}

/** A scope in the form a request checks fast: '*' or a set. */
export type ServerSet = typeof ALL_SERVERS | ReadonlySet<string>

export function serverSet (scope: ServerScope): ServerSet {
  return scope === ALL_SERVERS ? ALL_SERVERS : new Set(scope)
}

export function setCovers (set: ServerSet, guildId: string | undefined): guildId is string {
  return guildId !== undefined && (set === ALL_SERVERS || set.has(guildId))
}

/** Whether `outer` includes every server of `inner`. */
export function scopeIncludes (outer: ServerScope, inner: ServerScope): boolean {
  if (outer === ALL_SERVERS) return true
  if (inner === ALL_SERVERS) return false
  const set = new Set(outer)
  return inner.every((id) => set.has(id))
}

/** For people: "server 1", "servers 1, 2", "every server". */
export function describeScope (scope: ServerScope): string {
  if (scope === ALL_SERVERS) return 'every server'
  return scope.length === 1 ? `server ${scope[0] ?? ''}` : `servers ${scope.join(', ')}`
}
