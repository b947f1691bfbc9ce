// Bearer-token authentication of the write API, and the rule of what a token allows: its
// scopes and its servers, as each route declares them (`config.access`, src/pipeline/access.ts).
//
// As for API keys (auth.ts): a token is looked up at most once per API_KEY_CACHE_TTL_MS per
// instance, so a revoked or rotated token is refused everywhere within that time (5 s at most),
// and failed attempts count against the client address's failed-authentication limit. A token
// this instance saw valid lately is not refused unseen for its address's failures.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { hashApiKey } from '../api-keys/api-keys.js'
import { type Scope, type TokenCheck, tokenId, TokenStore } from '../tokens/token-store.js'
import { serverOf } from './access.js'
import { serverSet, type ServerSet, setCovers } from '../api-keys/server-scope.js'
import { withDeadline } from '../redis/deadline.js'
import { InvalidTokenError, MissingTokenError, NotPermittedError } from '../errors.js'

export interface AuthenticatedToken {
  id: string
  servers: ServerSet
  scopes: readonly Scope[]
}

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenStore
    /** onRequest hook: sets request.token, or refuses with 401, 403 (the route's scope) or 429. */
    authenticateToken: (request: FastifyRequest) => Promise<void>
    /** preHandler hook: 403 unless the token covers the server the route declares (from its validated parameters). */
    checkTokenServer: (request: FastifyRequest) => Promise<void>
  }
  interface FastifyRequest {
    token: AuthenticatedToken | null
  }
}

const RECENTLY_VALID_MS = 10 * 60_000
const BEARER = /^Bearer +(\S+)$/i

/** Whether `token` may act on server `guildId`. */
export function tokenCoversServer (token: AuthenticatedToken, guildId: string | undefined): guildId is string {
  return setCovers(token.servers, guildId)
}

export default fp(async function tokenAuthPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  const tokens = new TokenStore(fastify.redisClient, fastify.keys)
  const cacheTtl = config.apiKeyCacheTtlMs
  const checks = new LRUCache<string, { valid: AuthenticatedToken | null }>({ max: 10_000, ttl: Math.max(cacheTtl, 1) })
  const recentlyValid = new LRUCache<string, true>({ max: 50_000, ttl: RECENTLY_VALID_MS })

  fastify.decorate('tokens', tokens)
  fastify.decorateRequest('token', null)

  fastify.decorate('authenticateToken', async function authenticateToken (request: FastifyRequest) {
    const header = request.headers.authorization
    const presented = typeof header === 'string' ? BEARER.exec(header.trim())?.[1] : undefined
    if (presented === undefined) return await fastify.refuseAuthentication(request, new MissingTokenError())
    const wellFormed = tokenId(presented) !== null
    let check = cacheTtl > 0 && wellFormed ? checks.get(presented) : undefined
    if (check === undefined) {
      const hash = hashApiKey(presented)
      const refused = recentlyValid.has(hash) ? null : fastify.addressRefusal(request)
      if (refused !== null) throw refused
      const found: TokenCheck | null = wellFormed
        ? await withDeadline(tokens.check(presented), config.redisCommandTimeoutMs)
        : null
      check = { valid: found === null ? null : { id: found.id, servers: serverSet(found.servers), scopes: found.scopes } }
      if (cacheTtl > 0 && wellFormed) checks.set(presented, check)
      if (found !== null) recentlyValid.set(hash, true)
    }
    const token = check.valid
    if (token === null) return await fastify.refuseAuthentication(request, new InvalidTokenError())
    request.token = token

    const access = request.routeOptions.config.access
    // The guard (access.ts) gives every token route a scope: a route without one is never built.
    const scope = access?.kind === 'token' ? access.scope : undefined
    if (scope === undefined || !token.scopes.includes(scope)) {
      throw new NotPermittedError(`this token lacks the scope ${scope ?? 'of this route'}`)
    }
  })

  fastify.decorate('checkTokenServer', async function checkTokenServer (request: FastifyRequest) {
    const guildId = serverOf(request)
    if (guildId !== undefined && (request.token === null || !tokenCoversServer(request.token, guildId))) {
      throw new NotPermittedError(`this token does not cover server ${guildId}`)
    }
  })
}, { name: 'token-auth', dependencies: ['config', 'redis', 'auth'] })
