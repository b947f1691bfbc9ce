// The stores on the app's Redis connection, each a decorator of its own plugin: the reader
// (src/reader/), the API-key store (src/api-keys/), the sliding-window limiter
// (src/rate-limit/; its replies keep the estimate of Redis's clock current) and the writer
// library (src/writer/, for the write API only).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'
import { ApiKeyStore } from '../api-keys/api-keys.js'
import { SlidingWindow } from '../rate-limit/sliding-window.js'
import { LeaderboardWriter } from '../writer/leaderboard-writer.js'
import { IDEMPOTENCY_WINDOW_MS } from '../pipeline/idempotency.js'

declare module 'fastify' {
  interface FastifyInstance {
    leaderboard: LeaderboardReader
    apiKeys: ApiKeyStore
    slidingWindow: SlidingWindow
    writer: LeaderboardWriter
  }
}

export const leaderboardReaderPlugin = fp(async function leaderboardReaderPlugin (fastify: FastifyInstance) {
  fastify.decorate('leaderboard', new LeaderboardReader(fastify.redisClient, fastify.keys, fastify.redisClock))
}, { name: 'leaderboard-reader', dependencies: ['redis', 'redis-migration'] })

export const apiKeysPlugin = fp(async function apiKeysPlugin (fastify: FastifyInstance) {
  fastify.decorate('apiKeys', new ApiKeyStore(fastify.redisClient, fastify.keys))
}, { name: 'api-keys', dependencies: ['redis'] })

export const slidingWindowPlugin = fp(async function slidingWindowPlugin (fastify: FastifyInstance) {
  fastify.decorate('slidingWindow', new SlidingWindow(fastify.redisClient, fastify.redisClock))
}, { name: 'sliding-window', dependencies: ['redis'] })

/**
 * Operation ids are remembered 10 to 20 minutes, so that a retry within the Idempotency-Key
 * window is applied once even when the stored answer was lost; a write whose outcome stays
 * unknown is a 503 after a few command timeouts (the client retries with the same key).
 */
export const writerPlugin = fp(async function writerPlugin (fastify: FastifyInstance) {
  fastify.decorate('writer', new LeaderboardWriter(fastify.redisClient, fastify.keys, {
    operationWindowMs: IDEMPOTENCY_WINDOW_MS,
    clock: fastify.redisClock,
    settleTimeoutMs: Math.max(1000, 4 * fastify.config.redisCommandTimeoutMs)
  }))
}, { name: 'writer', dependencies: ['config', 'redis'] })
