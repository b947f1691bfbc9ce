// API-key authentication, and the rule of server scope (applied by the admission hook).
//
// A key is looked up in Redis at most once per API_KEY_CACHE_TTL_MS per instance (3 s by
// default), so a revoked key is refused everywhere within that time, and the common request
// costs no Redis round trip for authentication. Failed authentications are counted per client
// address (a parsed IP, see http/client-address.ts); past the limit an address is refused with
// 429, and while it is refused its unknown keys are not even looked up. A key this instance saw
// valid in the last 10 minutes is never locked out by its address's failures: it is still
// looked up when its cache entry expires, so a revocation still applies.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { apiKeyId, hashApiKey, type KeyCheck } from '../api-keys/api-keys.js'
import type { ClientAddress } from '../client-address.js'
import { clientAddress } from '../http/client-address.js'
import { withDeadline } from '../redis/deadline.js'
import type { Plan } from '../plans.js'
import { serverSet, type ServerSet, setCovers } from '../api-keys/server-scope.js'
import { InvalidApiKeyError, type LeaderboardError, MissingApiKeyError, RateLimitedError } from '../errors.js'

export interface AuthenticatedKey {
  id: string
  /** The servers it reads: '*' for every server. */
  servers: ServerSet
  plan: Plan
  /** When the key expires, by the local clock (from Redis's); null for never. */
  expiresAtLocal?: number | null
}

type CachedCheck =
  | (AuthenticatedKey & { valid: true, expiresAtLocal: number | null })
  | { valid: false }

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook: sets request.apiKey or refuses with 401/429. */
    authenticate: (request: FastifyRequest) => Promise<void>
    /**
     * Failed authentication of any kind (an API key, a write-API token): counts it against the
     * client address's limit and throws `error`, or 429 once the address is over the limit.
     */
    refuseAuthentication: (request: FastifyRequest, error: LeaderboardError) => Promise<never>
    /** The 429 for an address over the failed-authentication limit, or null. */
    addressRefusal: (request: FastifyRequest) => RateLimitedError | null
    /**
     * The request's key as this instance knows it now (its cache, else Redis), or null when it is
     * no longer valid. For the service's own checks (an open stream's key, again): a refusal
     * here is not the client's failed login, so it counts nothing against its address.
     */
    apiKeyNow: (request: FastifyRequest) => Promise<AuthenticatedKey | null>
    /** Empties this instance's key cache: every key is looked up again at its next use (after a key changed). */
    forgetApiKeys: () => void
  }
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null
  }
}

/**
 * Whether `key` may read server `guildId`: the one rule of server scope. The admission hook
 * applies it once per request, before any answer (a cached one included) and before any read
 * of the server's data (src/pipeline/admission.ts).
 */
export function keyCoversServer (key: AuthenticatedKey, guildId: string | undefined): guildId is string {
  return setCovers(key.servers, guildId)
}

/** How long a key seen valid is spared its address's lockout, and how many such keys are kept. */
const RECENTLY_VALID_MS = 10 * 60_000
const RECENTLY_VALID_MAX = 50_000

function toCached (check: KeyCheck): CachedCheck {
  if (check.status !== 'ok') return { valid: false }
  // Expiry is judged by Redis's clock: carry the key's remaining life over to the local one.
  const expiresAtLocal = check.expiresAt === null ? null : Date.now() + (check.expiresAt - check.redisNow)
  return { valid: true, id: check.id, servers: serverSet(check.servers), plan: check.plan, expiresAtLocal }
}

/** The key a request presents (`x-api-key`, its first value, trimmed), or ''. */
function presentedKey (request: FastifyRequest): string {
  const header = request.headers['x-api-key']
  return (Array.isArray(header) ? header[0] : header)?.trim() ?? ''
}

/** The key a check found, unless it is invalid or has expired since. */
function usable (check: CachedCheck): AuthenticatedKey | null {
  if (!check.valid || (check.expiresAtLocal !== null && Date.now() >= check.expiresAtLocal)) return null
  return { id: check.id, servers: check.servers, plan: check.plan, expiresAtLocal: check.expiresAtLocal }
}

export default fp(async function authPlugin (fastify: FastifyInstance) {
  const { config, apiKeys, slidingWindow, keys } = fastify
  const cacheTtl = config.apiKeyCacheTtlMs
  const checks = new LRUCache<string, CachedCheck>({ max: 10_000, ttl: Math.max(cacheTtl, 1) })
  // Addresses over the failed-authentication limit -> local time they may try again.
  const blocked = new LRUCache<ClientAddress, number>({ max: 10_000, ttl: config.authFailureWindowMs })
  // Hashes of keys this instance saw valid lately: their address's failures never lock them out.
  const recentlyValid = new LRUCache<string, true>({ max: RECENTLY_VALID_MAX, ttl: RECENTLY_VALID_MS })

  function refusedAddress (address: ClientAddress): RateLimitedError | null {
    const until = blocked.get(address) ?? 0
    const seconds = Math.ceil((until - Date.now()) / 1000)
    return seconds > 0 ? new RateLimitedError(`too many failed authentications from this address; retry in ${seconds} s`, seconds) : null
  }

  async function refuse (address: ClientAddress, error: LeaderboardError): Promise<never> {
    const already = refusedAddress(address)
    if (already !== null) throw already
    const result = await slidingWindow.hit(keys.authFailures(address), config.authFailureLimit, config.authFailureWindowMs)
    if (!result.success) {
      blocked.set(address, Date.now() + result.reset)
      throw refusedAddress(address) ?? error
    }
    throw error
  }

  /** Looks a key up in Redis (a well-formed one; anything else is unknown at once) and caches the answer. */
  async function lookUp (presented: string, hash: string): Promise<CachedCheck> {
    const wellFormed = apiKeyId(presented) !== null
    const check = wellFormed ? toCached(await withDeadline(apiKeys.check(presented), config.redisCommandTimeoutMs)) : { valid: false as const }
    if (cacheTtl > 0 && wellFormed) checks.set(presented, check)
    // Refreshed at each lookup, so at least every API_KEY_CACHE_TTL_MS while the key is used.
    if (check.valid) recentlyValid.set(hash, true)
    return check
  }

  fastify.decorateRequest('apiKey', null)
  fastify.decorate('refuseAuthentication', async (request: FastifyRequest, error: LeaderboardError) => await refuse(clientAddress(request), error))
  fastify.decorate('addressRefusal', (request: FastifyRequest) => refusedAddress(clientAddress(request)))

  fastify.decorate('authenticate', async function authenticate (request: FastifyRequest) {
    const presented = presentedKey(request)
    // Parsed only when a refusal needs it: the common request never does.
    if (presented === '') return await refuse(clientAddress(request), new MissingApiKeyError())

    // Cached by the key itself, not its hash, so a cached key costs no SHA-256.
    // Only well-formed keys (of bounded length) are cached; anything else is unknown at once.
    let check = cacheTtl > 0 ? checks.get(presented) : undefined
    if (check === undefined) {
      const hash = hashApiKey(presented)
      // Only a key this instance does not know as valid is refused unseen.
      const refused = recentlyValid.has(hash) ? null : refusedAddress(clientAddress(request))
      if (refused !== null) throw refused
      check = await lookUp(presented, hash)
    }
    const key = usable(check)
    if (key === null) return await refuse(clientAddress(request), new InvalidApiKeyError())
    request.apiKey = key
  })

  fastify.decorate('forgetApiKeys', () => { checks.clear() })
  fastify.decorate('apiKeyNow', async (request: FastifyRequest) => {
    const presented = presentedKey(request)
    if (presented === '') return null
    return usable((cacheTtl > 0 ? checks.get(presented) : undefined) ?? await lookUp(presented, hashApiKey(presented)))
  })
}, { name: 'auth', dependencies: ['config', 'redis', 'api-keys', 'sliding-window'] })
