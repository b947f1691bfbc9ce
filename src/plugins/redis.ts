// The Redis connection and the read-side services built on it, as decorators.
import fp from 'fastify-plugin'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { createRedis, type RedisClient } from '../redis/client.js'
import { KeyBuilder, SCHEMA_VERSION } from '../redis/keys.js'
import { migrate } from '../redis/migrate.js'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { ApiKeyStore } from '../api-keys/api-keys.js'
import { SlidingWindow } from '../rate-limit/sliding-window.js'
import { RedisClock } from '../redis/clock.js'
import { redisUnavailability, UNREACHABLE_RETRY_AFTER_SECONDS } from '../redis/errors.js'
import { RedisHealth } from '../redis/health.js'

const STARTUP_WAIT_MS = 5000
const MIGRATION_TIMEOUT_MS = 120_000

declare module 'fastify' {
  interface FastifyInstance {
    redisClient: RedisClient
    keys: KeyBuilder
    leaderboard: LeaderboardReader
    apiKeys: ApiKeyStore
    slidingWindow: SlidingWindow
    /** Redis's clock, estimated locally from the limiter's and the reads' replies. */
    redisClock: RedisClock
    /** Whether Redis serves (a write probe), and the outage log (see redis/health.ts). */
    redisHealth: RedisHealth
  }
}

export default fp(async function redisPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  const { redisUrl } = config
  if (redisUrl === undefined) throw new Error('redisUrl is required to build the app')
  const redis = createRedis({ url: redisUrl, cluster: config.redisCluster, commandTimeoutMs: config.redisCommandTimeoutMs })
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
  fastify.addHook('onClose', async () => {
    health.close()
    redis.disconnect()
  })
  // Without an offline queue, commands sent before the connection is up fail: give it a moment
  // at start. A Redis that is down stays a 503 (and /readyz says so) until it comes back.
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => { redis.once('ready', () => { resolve(true) }) }),
    sleep(STARTUP_WAIT_MS, false, { ref: false })
  ])
  if (!ready) fastify.log.warn(`redis not ready after ${STARTUP_WAIT_MS} ms; serving 503 until it is`)

  // Data written by an older release is moved to this one's layout before anything is served
  // (or as soon as Redis is reachable, if it is not yet).
  const migrateNow = async (): Promise<void> => {
    if (await redis.get(keys.schema) === String(SCHEMA_VERSION)) return
    // A server's move is one script that may run past the API's command timeout.
    const admin = createRedis({ url: redisUrl, cluster: config.redisCluster, commandTimeoutMs: MIGRATION_TIMEOUT_MS, offlineQueue: true })
    try {
      const result = await migrate(admin, keys)
      if (result.from !== result.to) fastify.log.info(result, 'redis data migrated to the current schema')
    } finally {
      admin.disconnect()
    }
  }
  if (ready) {
    await migrateNow()
  } else {
    redis.once('ready', () => { migrateNow().catch((err: Error) => { fastify.log.error({ err }, 'redis data migration failed') }) })
  }
  fastify.decorate<RedisClient>('redisClient', redis)
  fastify.decorate('keys', keys)
  const clock = new RedisClock()
  fastify.decorate('leaderboard', new LeaderboardReader(redis, keys, clock))
  fastify.decorate('apiKeys', new ApiKeyStore(redis, keys))
  fastify.decorate('redisClock', clock)
  fastify.decorate('slidingWindow', new SlidingWindow(redis, clock))
  fastify.decorate('redisHealth', health)
}, { name: 'redis', dependencies: ['config'] })
