// Admission of a request to a public board's route (access `public`, src/pipeline/access.ts):
// no key; each client address is counted over a sliding window of a minute
// (PUBLIC_LIMIT_PER_MINUTE, 304s and refusals of bad input included), then invalid input is
// refused (400), the slug is resolved to the server whose public board it is (404
// board_not_found: unknown, or the server is not public), and a conditional request whose tag is
// current gets its 304. The handler then serves the same read as the keyed route, through the
// same response cache. Open streams are capped per address on this instance.
//
// A slug's server is remembered for API_KEY_CACHE_TTL_MS on this instance (unknown slugs too,
// so a scan of slugs costs Redis one lookup per slug and period): a board made private, or a
// slug moved, is seen everywhere within that time, and its open streams end.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { LRUCache } from 'lru-cache'
import { BoardNotFoundError, RateLimitedError } from '../errors.js'
import { clientAddress } from '../http/client-address.js'
import { entityTag, matchingTag, sendNotModified } from '../http/etag.js'
import { withDeadline } from '../redis/deadline.js'
import { PublicSlugs } from '../settings/public-slugs.js'
import type { LimitResult } from '../rate-limit/sliding-window.js'
import { bodyDependsOnDay, type PublicAccess } from './access.js'

const MINUTE_MS = 60_000
/** What an address past its cap of open streams is told to wait. */
const STREAM_CAP_RETRY_AFTER_SECONDS = 5

declare module 'fastify' {
  interface FastifyInstance {
    /** preHandler hook of a public route: counts the address (429), refuses invalid input (400), resolves the slug (404), answers 304. */
    admitPublic: (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined>
    publicBoards: {
      /** The server whose public board `slug` is, or null (remembered for API_KEY_CACHE_TTL_MS). */
      resolve: (slug: string) => Promise<string | null>
      /** Counts one more request of the request's address (an open stream, each minute); sets the x-ratelimit-* headers when given a reply. */
      count: (request: FastifyRequest, reply?: FastifyReply) => Promise<LimitResult>
      /** onRequest hook of a public stream route: reserves one of its address's open streams, or 429. */
      reserve: onRequestHookHandler
    }
  }
}

/** A public route's slug, from its validated parameters. */
export function slugOf (request: FastifyRequest): string {
  const access = request.routeOptions.config.access as PublicAccess
  return (access.slug as (params: unknown) => string)(request.params)
}

export default fp(async function publicAdmissionPlugin (fastify: FastifyInstance) {
  const { config, leaderboard, redisClock, slidingWindow, keys } = fastify
  const slugs = new PublicSlugs(fastify.redisClient, keys)
  const remembered = new LRUCache<string, { guildId: string | null }>({ max: 10_000, ttl: Math.max(1, config.apiKeyCacheTtlMs) })

  async function resolve (slug: string): Promise<string | null> {
    const known = config.apiKeyCacheTtlMs > 0 ? remembered.get(slug) : undefined
    if (known !== undefined) return known.guildId
    const guildId = await withDeadline(slugs.resolve(slug), config.redisCommandTimeoutMs)
    remembered.set(slug, { guildId })
    return guildId
  }

  function rateHeaders (reply: FastifyReply, result: LimitResult): void {
    const seconds = Math.ceil(result.reset / 1000)
    reply.header('x-ratelimit-limit', result.limit).header('x-ratelimit-remaining', result.remaining).header('x-ratelimit-reset', seconds)
    if (!result.success) reply.header('retry-after', Math.max(1, seconds))
  }

  async function count (request: FastifyRequest, reply?: FastifyReply): Promise<LimitResult> {
    const result = await slidingWindow.hit(keys.publicReads(clientAddress(request)), config.publicLimitPerMinute, MINUTE_MS)
    if (reply !== undefined) rateHeaders(reply, result)
    return result
  }

  function refuse (result: LimitResult): never {
    const seconds = Math.max(1, Math.ceil(result.reset / 1000))
    throw new RateLimitedError(`more than ${result.limit} requests a minute to public boards from this address; retry in ${seconds} s`, seconds)
  }

  // Open public streams per address on this instance, reserved before the request is counted.
  const openByAddress = new Map<string, number>()
  const reserve: onRequestHookHandler = (request, reply, done) => {
    const address = clientAddress(request)
    const open = openByAddress.get(address) ?? 0
    if (open >= config.publicStreamsPerAddress) {
      done(new RateLimitedError(`at most ${config.publicStreamsPerAddress} public live-update streams may be open per address on this instance; ` +
        `close one, or retry in ${STREAM_CAP_RETRY_AFTER_SECONDS} s`, STREAM_CAP_RETRY_AFTER_SECONDS))
      return
    }
    openByAddress.set(address, open + 1)
    reply.raw.once('close', () => {
      const left = (openByAddress.get(address) ?? 1) - 1
      if (left <= 0) openByAddress.delete(address)
      else openByAddress.set(address, left)
    })
    done()
  }

  fastify.decorate('publicBoards', { resolve, count, reserve })

  fastify.decorate('admitPublic', async function admitPublic (request: FastifyRequest, reply: FastifyReply) {
    const invalid = request.refusal ?? request.validationError ?? null
    // The slug is looked up beside the count (one round trip), only once validation passed it.
    const server = invalid === null ? resolve(slugOf(request)) : undefined
    server?.catch(() => {}) // awaited below; a failure is the limiter's to report first
    const result = await count(request, reply)
    if (!result.success) refuse(result)
    if (invalid !== null) throw invalid
    const guildId = await server
    if (guildId === null || guildId === undefined) throw new BoardNotFoundError(slugOf(request))
    request.publicServer = guildId
    const version = await leaderboard.version(guildId)
    request.dataVersion = version
    const tag = matchingTag(request.headers['if-none-match'], entityTag(version, bodyDependsOnDay(request) ? redisClock.now() : undefined))
    if (tag !== null) return await sendNotModified(reply, tag)
  })
}, { name: 'public-admission', dependencies: ['config', 'redis', 'leaderboard-reader', 'sliding-window'] })
