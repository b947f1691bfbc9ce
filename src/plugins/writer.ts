// The writer library (src/writer/) on the app's Redis connection, for the write API. Operation
// ids are remembered 10 to 20 minutes, so that a retry within the Idempotency-Key window is
// applied once even when the stored answer was lost; a write whose outcome stays unknown is a
// 503 after a few command timeouts (the client retries with the same key).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { IDEMPOTENCY_WINDOW_MS } from './idempotency.js'

declare module 'fastify' {
  interface FastifyInstance {
    writer: LeaderboardWriter
  }
}

export default fp(async function writerPlugin (fastify: FastifyInstance) {
  fastify.decorate('writer', new LeaderboardWriter(fastify.redisClient, fastify.keys, {
    operationWindowMs: IDEMPOTENCY_WINDOW_MS,
    clock: fastify.redisClock,
    settleTimeoutMs: Math.max(1000, 4 * fastify.config.redisCommandTimeoutMs)
  }))
}, { name: 'writer', dependencies: ['config', 'redis'] })
