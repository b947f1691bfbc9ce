// Per-key rate limits by plan, through @fastify/rate-limit with our sliding-window store.
// Registered inside the API's scope, after authentication, so every authenticated response
// (400s and 404s included) is counted and carries the x-ratelimit-* headers.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { slidingWindowStore } from '../rate-limit/store.js'
import { RateLimitedError } from '../errors.js'

function keyOf (request: FastifyRequest) {
  if (request.apiKey === null) throw new Error('rate limit reached before authentication')
  return request.apiKey
}

export default fp(async function rateLimitPlugin (fastify: FastifyInstance) {
  const { config } = fastify
  await fastify.register(rateLimit, {
    global: true,
    hook: 'onRequest',
    store: slidingWindowStore(fastify.slidingWindow, fastify.keys),
    keyGenerator: (request) => keyOf(request).id,
    max: (request) => config.planLimits[keyOf(request).plan],
    timeWindow: config.rateLimitWindowMs,
    skipOnError: false, // Redis down means 503, never unlimited
    errorResponseBuilder: (request, context) => new RateLimitedError(
      `rate limit of ${context.max} requests per ${config.rateLimitWindowMs / 1000} s exceeded for this API key (${keyOf(request).plan} plan); retry in ${Math.ceil(context.ttl / 1000)} s`,
      Math.ceil(context.ttl / 1000))
  })
}, { name: 'rate-limit', dependencies: ['redis', 'auth'] })
