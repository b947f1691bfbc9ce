// The public API under /api/v1: the reads (each declared once in ./reads.ts, with its live-update
// stream) and /me; and public boards, the same reads with no key under /public/v1/{slug}, for the
// servers that made their board public. Each route's access (src/pipeline/access.ts) attaches its
// hooks: for key access, authentication, the cap of open streams for a stream, then, once
// validation has run (for a read's URL served before, with what validation made of it then:
// src/pipeline/reads.ts), admission (the count, the refusal of invalid input, the server scope,
// the 304, the data version); for public access, the count per client address and the slug's
// server (src/pipeline/public-admission.ts); then the route's handler (a read through the
// response cache, or a stream). Not wrapped in fastify-plugin on purpose: admission's limiter
// stays inside this scope, away from /healthz and the OpenAPI document.
import type { FastifyInstance } from 'fastify'
import admissionPlugin from '../../pipeline/admission.js'
import readsPlugin from '../../pipeline/reads.js'
import livePlugin from '../../pipeline/live.js'
import publicAdmissionPlugin from '../../pipeline/public-admission.js'
import { registerPublicReads, registerReads } from '../../pipeline/read-routes.js'
import { reads } from './reads.js'
import meRoutes from './me.js'
import { boardPageRoutes, rankCardRoutes } from '../public/board-page.js'

export const API_PREFIX = '/api/v1'
/** Public boards' reads (no key): `/public/v1/{slug}/leaderboard` and the like. */
export const PUBLIC_PREFIX = '/public/v1'

export default async function api (fastify: FastifyInstance) {
  await fastify.register(admissionPlugin)
  await fastify.register(publicAdmissionPlugin)
  await fastify.register(readsPlugin)
  await fastify.register(livePlugin)
  await fastify.register(async (keyed) => {
    registerReads(keyed, reads)
    await keyed.register(meRoutes)
  }, { prefix: API_PREFIX })
  await fastify.register(async (boards) => {
    registerPublicReads(boards, reads)
    await boards.register(rankCardRoutes)
  }, { prefix: PUBLIC_PREFIX })
  await fastify.register(boardPageRoutes)
}
