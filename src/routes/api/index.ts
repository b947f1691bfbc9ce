// The public API under /api/v1: authentication, then admission (the per-key rate limit, the
// server scope check and conditional requests), then the cached answer, then validation and the
// handler. Not
// wrapped in fastify-plugin on purpose: the hooks and the rate limit stay inside this scope,
// away from /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import admissionPlugin from '../../plugins/admission.js'
import readsPlugin from '../../plugins/reads.js'
import serverRoutes from './servers.js'
import memberListRoutes from './member-lists.js'
import livePlugin from '../../plugins/live.js'
import streamRoutes from './streams.js'
import meRoutes from './me.js'

export default async function api (fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(admissionPlugin)
  await fastify.register(livePlugin) // its cap of streams per key comes before admission counts
  fastify.addHook('onRequest', fastify.admit)
  await fastify.register(readsPlugin)
  await fastify.register(serverRoutes)
  await fastify.register(memberListRoutes)
  await fastify.register(streamRoutes)
  await fastify.register(meRoutes)
}
