// The public API under /api/v1: the reads (each declared once in ./reads.ts, with its live-update
// stream) and /me. Each route's key access (src/pipeline/access.ts) attaches its hooks:
// authentication, the cap of open streams for a stream, then, once validation has run,
// admission (the count, the refusal of invalid input, the server scope, the 304, the data
// version) and the route's handler (a read through the response cache, or a stream). Not
// wrapped in fastify-plugin on purpose: admission's limiter stays inside this scope, away from
// /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import admissionPlugin from '../../pipeline/admission.js'
import readsPlugin from '../../pipeline/reads.js'
import livePlugin from '../../pipeline/live.js'
import { registerReads } from '../../pipeline/read-routes.js'
import { reads } from './reads.js'
import meRoutes from './me.js'

export default async function api (fastify: FastifyInstance) {
  await fastify.register(admissionPlugin)
  await fastify.register(readsPlugin)
  await fastify.register(livePlugin)
  registerReads(fastify, reads)
  await fastify.register(meRoutes)
}
