// The Redis connection, the key builder, Redis's health and its clock (estimated from replies),
// as decorators. The services built on
// the connection are their own plugins (redis-migration.ts, leaderboard-reader.ts, api-keys.ts,
// sliding-window.ts), each naming this one as a dependency.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createRedis, readyWithin, type RedisClient } from '../redis/client.js'
import { KeyBuilder } from '../redis/keys.js'
import { redisUnavailability, UNREACHABLE_RETRY_AFTER_SECONDS } from '../redis/errors.js'
import { RedisHealth } from '../redis/health.js'
import { RedisClock } from '../redis/clock.js'
import { FUNCTIONS_REFUSED } from '../redis/functions.js'

const STARTUP_WAIT_MS = 5000

declare module 'fastify' {
  interface FastifyInstance {
    redisClient: RedisClient
    keys: KeyBuilder
    /** Redis's clock, estimated locally from the limiter's and the reads' replies. */
    redisClock: RedisClock
    /** Whether Redis serves (a write probe), and the outage log (see redis/health.ts). */
    redisHealth: RedisHealth
    /** Whether Redis was ready when the app started (else it is waited for in the background). */
    redisReadyAtStart: boolean
  }
}

export interface RedisPluginOptions {
  /** The connection's name in CLIENT LIST: which listener's requests it carries. */
  connectionName: string
}

export default fp<RedisPluginOptions>(async function redisPlugin (fastify: FastifyInstance, { connectionName }) {
  const { config } = fastify
  const { redisUrl } = config
  if (redisUrl === undefined) throw new Error('redisUrl is required to build the app')
  const redis = createRedis({ url: redisUrl, cluster: config.redisCluster, commandTimeoutMs: config.redisCommandTimeoutMs, name: connectionName })
  const keys = new KeyBuilder(config.redisPrefix)
  // A write with an expiry: OOM, READONLY and MISCONF refuse writes only, and the rate limit
  // writes on every request, so a PING would call ready a Redis that refuses every request.
  const health = new RedisHealth({
    probe: async () => { await redis.set(keys.readinessProbe(), '1', 'PX', 60_000) },
    log: fastify.log,
    summaryIntervalMs: config.outageLogIntervalMs
  })
  // ioredis reports every failed reconnection attempt: the health log reports transitions.
  redis.on('error', (err: Error) => {
    health.failed(redisUnavailability(err) ?? { reason: 'unreachable', retryAfterSeconds: UNREACHABLE_RETRY_AFTER_SECONDS }, { request: false })
  })
  redis.on('ready', () => { health.recheck() })
  // Once per process (src/redis/functions.ts): correct, at the EVALSHA path's cost.
  redis.once(FUNCTIONS_REFUSED, (reason: string) => {
    fastify.log.warn({ reason }, 'Redis refused FCALL or FUNCTION LOAD: the award scripts go by EVALSHA from now on')
  })
  fastify.addHook('onClose', async () => {
    health.close()
    redis.disconnect()
  })
  // Without an offline queue, commands sent before the connection is up fail: give it a moment
  // at start. A Redis that is down stays a 503 (and /readyz says so) until it comes back.
  const ready = await readyWithin(redis, STARTUP_WAIT_MS)
  if (!ready) fastify.log.warn(`redis not ready after ${STARTUP_WAIT_MS} ms; serving 503 until it is`)

  fastify.decorate<RedisClient>('redisClient', redis)
  fastify.decorate('keys', keys)
  fastify.decorate('redisClock', new RedisClock())
  fastify.decorate('redisHealth', health)
  fastify.decorate('redisReadyAtStart', ready)
}, { name: 'redis', dependencies: ['config'] })
