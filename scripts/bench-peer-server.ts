// The "fused peer" `npm run bench` measures the service against: another design of the same
// contract, with no response cache, that answers each read with one Lua script doing the
// sliding-window limiter and the read together. It serves the service's read routes under
// /api/v1 with the same schemas (validation, the query checks, serialization: the same bytes),
// the same key lookup (cached in memory for API_KEY_CACHE_TTL_MS's default, 3 s), the same
// server check, header lines, ETag and request log line (src/logger.ts), and the service's own
// scripts: each read script and the limiter's are joined into one (see `fusedLua`), and the reads
// are decoded by the service's reader. So every request costs Redis one script that counts it and
// reads the data, where the service asks Redis only for the count and the data version of a read
// it has cached. A conditional request is answered 304 when its tag matches, counted.
//
//   node --import tsx scripts/bench-peer-server.ts <port> <redis url>
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { randomUUID } from 'node:crypto'
import type { Static, TObject } from 'typebox'
import { LRUCache } from 'lru-cache'
import { createRedis, type RedisClient } from '../src/redis/client.js'
import { KeyBuilder } from '../src/redis/keys.js'
import { scripts } from '../src/redis/scripts.js'
import { BUCKETS } from '../src/rate-limit/sliding-window.js'
import { LeaderboardReader } from '../src/reader/leaderboard-reader.js'
import { ApiKeyStore } from '../src/api-keys/api-keys.js'
import { serverSet, setCovers, type ServerSet } from '../src/api-keys/server-scope.js'
import { loadConfig } from '../src/config.js'
import type { Plan } from '../src/plans.js'
import { lazyChildLoggerFactory, loggerOptions, RequestLogController } from '../src/logger.js'
import { sendError } from '../src/plugins/error-handler.js'
import { ForbiddenError, InvalidApiKeyError, LeaderboardError, MissingApiKeyError, RateLimitedError } from '../src/errors.js'
import { type ErrorCode, isErrorCode } from '../src/http/error-codes.js'
import { cacheHeaders, entityTag, etagHeader, matchingTag, sendNotModified } from '../src/http/etag.js'
import { SECURITY_HEADERS } from '../src/http/security-headers.js'
import { closedQueryString, requestValidators } from '../src/http/request-validation.js'
import { validationMessage } from '../src/schemas/messages.js'
import { namedSchemas } from '../src/schemas/index.js'
import { ReadRequestHeaders } from '../src/schemas/headers.js'
import { readResponses } from '../src/schemas/responses.js'
import { reads } from '../src/routes/api/reads.js'

const [port, redisUrl] = process.argv.slice(2)
if (port === undefined || redisUrl === undefined) throw new Error('usage: bench-peer-server.ts <port> <redis url>')
const config = loadConfig({ REDIS_URL: redisUrl })

/**
 * One script: the limiter's (its KEYS[1], ARGV[1..3]: limit, window, slices), then, if the
 * request is admitted, the read's (the rest of KEYS and ARGV). Each script's body becomes a local
 * function whose parameters KEYS and ARGV stand for the globals it reads, unchanged.
 * Returns { limiter's reply } when refused, else { limiter's reply, read's reply }.
 */
function fusedLua (limiter: string, read: string): string {
  return `local function limiter (KEYS, ARGV)\n${limiter}\nend\n` +
    `local function read (KEYS, ARGV)\n${read}\nend\n` +
    "local verdict = limiter({ KEYS[1] }, { ARGV[1], ARGV[2], ARGV[3], '0', '1' })\n" +
    'if verdict[1] == 0 then return { verdict } end\n' +
    'return { verdict, read({ unpack(KEYS, 2) }, { unpack(ARGV, 4) }) }\n'
}

/** The limiter's reply: admitted (1 or 0), count, ms until it falls, Redis's clock, ms until one more is admitted. */
type LimiterReply = [number, number, number, number, number]

/** The request whose read is being issued now (set around the synchronous start of a read). */
interface Issuing { limiterKey: string, limit: number, verdict: LimiterReply | undefined, fused: boolean }
let issuing: Issuing | undefined

const redis = createRedis({ url: redisUrl, commandTimeoutMs: config.redisCommandTimeoutMs })
const keys = new KeyBuilder()
const definitions = scripts()
const limiterLua = definitions.find((s) => s.name === 'slidingWindow')?.lua ?? ''
// The reader's client, but with each read script fused with the limiter for the request issuing it.
const fusing = Object.create(redis) as RedisClient & Record<string, (...args: unknown[]) => Promise<unknown>>
const methods = redis as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
for (const { name, numberOfKeys, lua } of definitions) {
  // The reads with a fixed number of keys (each of these): the limiter's key goes first.
  if (numberOfKeys === undefined || !['leaderboardPage', 'member', 'guildStats', 'around', 'memberBatch', 'periodPage'].includes(name)) continue
  const fusedName = `fused${name[0]?.toUpperCase() ?? ''}${name.slice(1)}`
  redis.defineCommand(fusedName, { numberOfKeys: numberOfKeys + 1, lua: fusedLua(limiterLua, lua) })
  fusing[name] = async (...args: unknown[]) => {
    const request = issuing
    // A second call of one read (the period boards turned meanwhile) is not counted again.
    if (request === undefined || request.fused) return await (methods[name] as (...a: unknown[]) => Promise<unknown>).apply(redis, args)
    request.fused = true
    const reply = await (methods[fusedName] as (...a: unknown[]) => Promise<[LimiterReply, unknown?]>).call(redis,
      request.limiterKey, ...args.slice(0, numberOfKeys), request.limit, config.rateLimitWindowMs, BUCKETS, ...args.slice(numberOfKeys))
    request.verdict = reply[0]
    if (reply[0][0] !== 1) {
      const seconds = Math.max(1, Math.ceil(reply[0][4] / 1000))
      throw new RateLimitedError(`rate limit of ${request.limit} requests exceeded; retry in ${seconds} s`, seconds)
    }
    return reply[1]
  }
}
const reader = new LeaderboardReader(fusing, keys)
const apiKeys = new ApiKeyStore(redis, keys)

interface Key { id: string, servers: ServerSet, plan: Plan }
const checks = new LRUCache<string, { key: Key | null }>({ max: 10_000, ttl: config.apiKeyCacheTtlMs })
const planLimits = { free: 1e9, starter: 1e9, professional: 1e9 }

const fastify = Fastify({
  logger: loggerOptions('info'),
  logController: new RequestLogController(),
  requestIdHeader: false,
  genReqId: () => randomUUID(),
  schemaController: { compilersFactory: { buildValidator: requestValidators() } }
})
fastify.setChildLoggerFactory(lazyChildLoggerFactory)
fastify.addHook('onRoute', closedQueryString)
fastify.decorateRequest('apiKey', null)
for (const schema of namedSchemas) fastify.addSchema(schema)
fastify.setErrorHandler((error: Error & { validation?: unknown, retryAfterSeconds?: number }, request, reply) => {
  if (error.validation !== undefined) return sendError(reply, 'invalid_parameter', validationMessage(error as never, request))
  if (error.retryAfterSeconds !== undefined) reply.header('retry-after', error.retryAfterSeconds)
  if (error instanceof LeaderboardError && isErrorCode(error.code)) return sendError(reply, error.code as ErrorCode, error.message)
  return sendError(reply, 'internal_error', 'an unexpected error occurred')
})
fastify.addHook('onRequest', (request, reply, done) => {
  reply.header('x-request-id', request.id).headers(SECURITY_HEADERS)
  done()
})
fastify.get('/ready', async () => 'ready')

async function authenticate (request: FastifyRequest): Promise<void> {
  const presented = request.headers['x-api-key']
  if (typeof presented !== 'string' || presented === '') throw new MissingApiKeyError()
  let check = checks.get(presented)
  if (check === undefined) {
    const found = await apiKeys.check(presented)
    check = { key: found.status === 'ok' ? { id: found.id, servers: serverSet(found.servers), plan: found.plan } : null }
    checks.set(presented, check)
  }
  if (check.key === null) throw new InvalidApiKeyError()
  request.apiKey = check.key
}

for (const d of reads) {
  const perDayOf = (query: unknown): boolean => typeof d.perDay === 'function' ? d.perDay(query) : d.perDay === true
  fastify.route({
    method: 'GET',
    url: `/api/v1${d.path}`,
    schema: {
      params: d.params,
      ...(d.query === undefined ? {} : { querystring: d.query }),
      headers: ReadRequestHeaders,
      response: readResponses(d.body, d.description)
    },
    onRequest: authenticate,
    ...(d.checks === undefined
      ? {}
      : {
          preValidation: async (request: FastifyRequest) => {
            for (const check of d.checks ?? []) {
              const refusal = check(request)
              if (refusal !== null) throw refusal
            }
          }
        }),
    handler: async (request: FastifyRequest, reply: FastifyReply) => {
      const key = request.apiKey
      if (key === null) throw new InvalidApiKeyError()
      const guildId = d.server(request.params)
      if (!setCovers(key.servers, guildId)) throw new ForbiddenError(guildId)
      const limit = planLimits[key.plan]
      const me: Issuing = { limiterKey: keys.keyRateLimit(key.id), limit, verdict: undefined, fused: false }
      issuing = me
      let reading
      try {
        reading = d.read(reader, { params: request.params as Static<TObject>, query: (request.query ?? {}) as Static<TObject> })
      } finally {
        issuing = undefined
      }
      const result = await reading
      const [, count, resetMs] = me.verdict ?? [0, 0, 0]
      reply.header('x-ratelimit-limit', limit).header('x-ratelimit-remaining', Math.max(0, limit - count))
        .header('x-ratelimit-reset', Math.ceil(resetMs / 1000))
      const tag = entityTag(result.version, perDayOf(request.query) ? result.nowMs : undefined)
      const matched = matchingTag(request.headers['if-none-match'], tag)
      if (matched !== null) return sendNotModified(reply, matched)
      cacheHeaders(reply).header('etag', etagHeader(tag, 'identity'))
      return result.value
    }
  })
}
fastify.addHook('onClose', () => { redis.disconnect() })
await fastify.listen({ host: '127.0.0.1', port: Number(port) })
