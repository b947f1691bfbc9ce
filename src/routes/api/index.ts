// The public API under /api/v1: authentication, then the per-key rate limit, then the server
// scope check, then validation and the handler. Not wrapped in fastify-plugin on purpose: the
// hooks and the rate limit stay inside this scope, away from /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import rateLimitPlugin from '../../plugins/rate-limit.js'
import serverRoutes from './servers.js'

export default async function api (fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(rateLimitPlugin)
  fastify.addHook('preValidation', fastify.authorizeGuild)
  await fastify.register(serverRoutes)
}
