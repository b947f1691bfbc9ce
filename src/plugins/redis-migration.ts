// Data written by an older release is moved to this one's layout before anything is served
// (or as soon as Redis is reachable, if it is not yet). See src/redis/migrate.ts.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { createRedis } from '../redis/client.js'
import { SCHEMA_VERSION } from '../redis/keys.js'
import { migrate } from '../redis/migrate.js'

// A server's move is one script that may run past the API's command timeout.
const MIGRATION_TIMEOUT_MS = 120_000

export default fp(async function redisMigrationPlugin (fastify: FastifyInstance) {
  const { config, keys, redisClient: redis } = fastify
  const migrateNow = async (): Promise<void> => {
    if (await redis.get(keys.schema) === String(SCHEMA_VERSION)) return
    const admin = createRedis({ url: config.redisUrl as string, cluster: config.redisCluster, commandTimeoutMs: MIGRATION_TIMEOUT_MS, offlineQueue: true, name: 'leaderboard-migration' })
    try {
      const result = await migrate(admin, keys)
      if (result.from !== result.to) fastify.log.info(result, 'redis data migrated to the current schema')
    } finally {
      admin.disconnect()
    }
  }
  if (fastify.redisReadyAtStart) {
    await migrateNow()
  } else {
    redis.once('ready', () => { migrateNow().catch((err: Error) => { fastify.log.error({ err }, 'redis data migration failed') }) })
  }
}, { name: 'redis-migration', dependencies: ['config', 'redis'] })
