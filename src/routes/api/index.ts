// The public API under /api/v1: authentication, then admission (the per-key rate limit and
// conditional requests), then the server scope check, then validation and the handler. Not
// wrapped in fastify-plugin on purpose: the hooks and the rate limit stay inside this scope,
// away from /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import rateLimitPlugin from '../../plugins/rate-limit.js'
import readsPlugin from '../../plugins/reads.js'
import serverRoutes from './servers.js'
import memberListRoutes from './member-lists.js'

export default async function api (fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(rateLimitPlugin)
  fastify.addHook('onRequest', fastify.admit)
  await fastify.register(readsPlugin)
  fastify.addHook('preValidation', fastify.authorizeGuild)
  await fastify.register(serverRoutes)
  await fastify.register(memberListRoutes)
}
