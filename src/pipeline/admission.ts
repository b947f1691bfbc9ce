// Admission of an authenticated request to a route with key access (src/pipeline/access.ts),
// once validation has run (or, for a URL this instance served before, with the values validation
// made of it then: src/pipeline/reads.ts), in order: a refusal this instance remembers, the per-key rate limit by
// plan (@fastify/rate-limit with our sliding-window store, read through one plain verdict), the
// refusal of invalid input (counted: every authenticated answer carries x-ratelimit-*), the server
// scope (one rule, auth.ts's keyCoversServer, applied to the server the route declares), and
// conditional requests. Then the route's handler, which serves a read from the response cache
// or from Redis (src/pipeline/reads.ts).
//
// Nothing here builds a key of a server's from a value validation has not passed: the server is
// read from the validated parameters, and only for a valid request of a server the key covers.
// The limiter and the read of that server's data version go to Redis together, in one round
// trip; the version lets the route serve its cached body. A request whose If-None-Match holds the
// current ETag is answered 304 without counting against the quota (the limiter is only read),
// within REVALIDATIONS_PER_SECOND per key on this instance; past that it is counted like any other.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { LRUCache } from 'lru-cache'
import { slidingWindowStore } from '../rate-limit/store.js'
import { ForbiddenError, RateLimitedError } from '../errors.js'
import { entityTag, matchingTag, sendNotModified } from '../http/etag.js'
import { bodyDependsOnDay, serverOf } from './access.js'
import { type AuthenticatedKey, keyCoversServer } from './auth.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler hook: counts the request, refuses invalid input (400), checks its server scope (403), answers 304 or reads the server's data version. */
    admit: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
    /**
     * The key's quota through the same limiter: counts one more request (`increment`, as an open
     * stream does each minute) or only reads the count; sets the x-ratelimit-* headers when given a reply.
     */
    quota: (request: FastifyRequest, increment: boolean, reply?: FastifyReply) => Promise<Verdict>
  }
  interface FastifyRequest {
    /** The data version of the request's own server, read with the limiter; undefined for another server. */
    dataVersion: string | undefined
    /**
     * Counted and let through by admit: a second call (the preHandler's, after a known URL was
     * admitted before validation: src/pipeline/reads.ts) does nothing.
     */
    admitted: boolean
  }
}

function keyOf (request: FastifyRequest): AuthenticatedKey {
  if (request.apiKey === null) throw new Error('admission reached before authentication')
  return request.apiKey
}

/** The limiter's answer for one request. */
export interface Verdict {
  /** Counted and admitted (a refused request is not counted). */
  admitted: boolean
  limit: number
  remaining: number
  /** Ms until the count falls (admitted), or until one more request would be admitted (refused). */
  resetMs: number
}

/** Free revalidations per key on this instance, counted in the current second. */
class RevalidationBound {
  readonly #perSecond: number
  #second = 0
  #used = new Map<string, number>()

  constructor (perSecond: number) {
    this.#perSecond = perSecond
  }

  take (keyId: string): boolean {
    const second = Math.floor(Date.now() / 1000)
    if (second !== this.#second) {
      this.#second = second
      this.#used.clear()
    }
    const used = this.#used.get(keyId) ?? 0
    if (used >= this.#perSecond) return false
    this.#used.set(keyId, used + 1)
    return true
  }
}

export default fp(async function admissionPlugin (fastify: FastifyInstance) {
  const { config, leaderboard, redisClock } = fastify
  await fastify.register(rateLimit, {
    global: false,
    store: slidingWindowStore(fastify.slidingWindow, fastify.keys),
    keyGenerator: (request) => keyOf(request).id,
    max: (request) => config.planLimits[keyOf(request).plan],
    timeWindow: config.rateLimitWindowMs,
    skipOnError: false // Redis down means 503, never unlimited
  })
  const rateLimiter = fastify.createRateLimit()
  /** Counts the request (or, with `increment` false, only reads its key's count). */
  async function limit (request: FastifyRequest, increment: boolean): Promise<Verdict> {
    const result = await rateLimiter(request, { increment })
    if (result.isAllowed) throw new Error('no allow-list is configured, so every request is counted')
    return { admitted: !result.isExceeded, limit: result.max, remaining: result.remaining, resetMs: result.ttl }
  }
  const revalidations = new RevalidationBound(config.revalidationsPerSecond)
  // A refused key cannot be admitted before its reset (only time lowers a count) while its limit
  // stays the same, so this instance refuses it until then without asking Redis: a key hammering
  // past its limit costs Redis nothing. Remembered by key and limit: a plan change (seen within
  // API_KEY_CACHE_TTL_MS, with the key's next lookup) makes Redis decide again.
  const refusedUntil = new LRUCache<string, number>({ max: 10_000, ttl: config.rateLimitWindowMs })
  const refusalId = (key: AuthenticatedKey): string => `${key.id} ${config.planLimits[key.plan]}`

  function rateHeaders (reply: FastifyReply, { limit, remaining, resetMs }: Verdict): void {
    reply.header('x-ratelimit-limit', limit).header('x-ratelimit-remaining', remaining).header('x-ratelimit-reset', Math.ceil(resetMs / 1000))
  }

  function refuse (reply: FastifyReply, key: AuthenticatedKey, limit: number, resetMs: number): never {
    const seconds = Math.max(1, Math.ceil(resetMs / 1000))
    reply.header('x-ratelimit-limit', limit).header('x-ratelimit-remaining', 0).header('x-ratelimit-reset', seconds)
    throw new RateLimitedError(
      `rate limit of ${limit} requests per ${config.rateLimitWindowMs / 1000} s exceeded for this API key (${key.plan} plan); retry in ${seconds} s`,
      seconds)
  }

  fastify.decorateRequest('dataVersion', undefined)
  fastify.decorateRequest('admitted', false)

  fastify.decorate('quota', async function quota (request: FastifyRequest, increment: boolean, reply?: FastifyReply) {
    const verdict = await limit(request, increment)
    if (reply !== undefined) rateHeaders(reply, verdict)
    return verdict
  })

  fastify.decorate('admit', async function admit (request: FastifyRequest, reply: FastifyReply) {
    if (request.admitted) {
      // Counted already; validation's refusal still stops it (a known URL cannot get one, but
      // that is reads.ts's reasoning, and the handler must never see invalid input).
      const invalid = request.refusal ?? request.validationError ?? null
      if (invalid !== null) throw invalid
      return
    }
    const key = keyOf(request)
    const until = refusedUntil.get(refusalId(key))
    if (until !== undefined && until > Date.now()) refuse(reply, key, config.planLimits[key.plan], until - Date.now())

    // The server scope, decided once, on the validated server: a key outside it gets its 403
    // below, counted, and no version, so nothing of the server's (not a cached answer either)
    // can reach it. Invalid input is refused (400) after it, also without a version: a URL that
    // validation refuses never gets a 304.
    const invalid = request.refusal ?? request.validationError ?? null
    const guildId = serverOf(request)
    const covered = guildId !== undefined && keyCoversServer(key, guildId)
    // Issued now, beside the limiter's script: one round trip for both.
    const version = covered && invalid === null ? leaderboard.version(guildId) : undefined
    version?.catch(() => {}) // awaited below; a failure is the limiter's to report first

    const ifNoneMatch = request.headers['if-none-match']
    if (version !== undefined && ifNoneMatch !== undefined && revalidations.take(key.id)) {
      const [current, peek] = await Promise.all([version, limit(request, false)])
      request.dataVersion = current
      const tag = matchingTag(ifNoneMatch, entityTag(current, bodyDependsOnDay(request) ? redisClock.now() : undefined))
      if (tag !== null) {
        rateHeaders(reply, peek)
        return await sendNotModified(reply, tag)
      }
    }

    const [verdict, current] = await Promise.all([limit(request, true), version])
    request.dataVersion = current
    if (!verdict.admitted) {
      refusedUntil.set(refusalId(key), Date.now() + verdict.resetMs)
      refuse(reply, key, verdict.limit, verdict.resetMs)
    }
    rateHeaders(reply, verdict)
    if (guildId !== undefined && !covered) throw new ForbiddenError(guildId)
    if (invalid !== null) throw invalid
    request.admitted = true
  })
}, { name: 'admission', dependencies: ['config', 'redis', 'leaderboard-reader', 'sliding-window', 'auth'] })
