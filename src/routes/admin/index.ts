// The write API under /admin/v1 (ADMIN_PORT): bearer-token authentication with the token's
// scopes and servers (pipeline/token-auth.ts), then Idempotency-Key (pipeline/idempotency.ts),
// then validation and the handler, which maps the request to the library.
import type { FastifyInstance } from 'fastify'
import idempotencyPlugin from '../../pipeline/idempotency.js'
import memberRoutes from './members.js'
import keyRoutes from './keys.js'
import transferRoutes from './transfer.js'

export default async function admin (fastify: FastifyInstance) {
  fastify.addHook('onRequest', fastify.authenticateToken)
  await fastify.register(idempotencyPlugin)
  await fastify.register(memberRoutes)
  await fastify.register(keyRoutes)
  await fastify.register(transferRoutes)
}
