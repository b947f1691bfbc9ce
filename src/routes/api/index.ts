// The public API under /api/v1. Every request is authenticated first; then each kind of
// endpoint has its own scope, whose hooks run in the order they are added:
// - reads (leaderboard, members, stats, /me): admission (the per-key rate limit, the server
//   scope check and conditional requests), the cached answer, then validation and the handler;
// - live-update streams: the cap of open streams per key (a refused stream is not counted),
//   admission, then validation and the handler.
// So a read pays no hook of the streams' and a stream none of the reads' cache. Not wrapped in
// fastify-plugin on purpose: the hooks and the rate limit stay inside this scope, away from
// /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import admissionPlugin from '../../pipeline/admission.js'
import readsPlugin from '../../pipeline/reads.js'
import serverRoutes from './servers.js'
import memberListRoutes from './member-lists.js'
import livePlugin from '../../pipeline/live.js'
import streamRoutes from './streams.js'
import meRoutes from './me.js'

export default async function api (fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticate)
  await fastify.register(admissionPlugin)

  await fastify.register(async function reads (scope: FastifyInstance) {
    scope.addHook('onRequest', scope.admit)
    await scope.register(readsPlugin)
    await scope.register(serverRoutes)
    await scope.register(memberListRoutes)
    await scope.register(meRoutes)
  })

  await fastify.register(async function streams (scope: FastifyInstance) {
    await scope.register(livePlugin)
    scope.addHook('onRequest', scope.admit)
    await scope.register(streamRoutes)
  })
}
