// The sliding-window limiter (src/rate-limit/sliding-window.ts) on the app's Redis connection,
// and Redis's clock, which the limiter's replies keep estimated.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { SlidingWindow } from '../rate-limit/sliding-window.js'
import { RedisClock } from '../redis/clock.js'

declare module 'fastify' {
  interface FastifyInstance {
    slidingWindow: SlidingWindow
    /** Redis's clock, estimated locally from the limiter's replies. */
    redisClock: RedisClock
  }
}

export default fp(async function slidingWindowPlugin (fastify: FastifyInstance) {
  const clock = new RedisClock()
  fastify.decorate('redisClock', clock)
  fastify.decorate('slidingWindow', new SlidingWindow(fastify.redisClient, clock))
}, { name: 'sliding-window', dependencies: ['redis'] })
