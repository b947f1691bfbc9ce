// The read side's queries (src/reader/leaderboard-reader.ts) on the app's Redis connection.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { LeaderboardReader } from '../reader/leaderboard-reader.js'

declare module 'fastify' {
  interface FastifyInstance {
    leaderboard: LeaderboardReader
  }
}

export default fp(async function leaderboardReaderPlugin (fastify: FastifyInstance) {
  fastify.decorate('leaderboard', new LeaderboardReader(fastify.redisClient, fastify.keys, fastify.redisClock))
}, { name: 'leaderboard-reader', dependencies: ['redis', 'redis-migration'] })
