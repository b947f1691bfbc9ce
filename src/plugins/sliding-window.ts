// The sliding-window limiter (src/rate-limit/sliding-window.ts) on the app's Redis connection;
// its replies keep the estimate of Redis's clock (fastify.redisClock) current.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { SlidingWindow } from '../rate-limit/sliding-window.js'

declare module 'fastify' {
  interface FastifyInstance {
    slidingWindow: SlidingWindow
  }
}

export default fp(async function slidingWindowPlugin (fastify: FastifyInstance) {
  fastify.decorate('slidingWindow', new SlidingWindow(fastify.redisClient, fastify.redisClock))
}, { name: 'sliding-window', dependencies: ['redis'] })
