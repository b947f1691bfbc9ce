// The write API under /admin/v1 (ADMIN_PORT). Each route declares its token access
// (src/pipeline/access.ts: the scope it needs, the server it acts on, whether it takes
// Idempotency-Key), which attaches its hooks: bearer-token authentication and the scope
// (pipeline/token-auth.ts), then, once validation has run, the server check and Idempotency-Key
// (pipeline/idempotency.ts), then the handler, which maps the request to the library.
import type { FastifyInstance } from 'fastify'
import idempotencyPlugin from '../../pipeline/idempotency.js'
import memberRoutes from './members.js'
import visibilityRoutes from './visibility.js'
import settingsRoutes from './settings.js'
import keyRoutes from './keys.js'
import transferRoutes from './transfer.js'
import webhookRoutes from './webhooks.js'
import seasonRoutes from './seasons.js'

export default async function admin (fastify: FastifyInstance) {
  await fastify.register(idempotencyPlugin)
  await fastify.register(memberRoutes)
  await fastify.register(visibilityRoutes)
  await fastify.register(settingsRoutes)
  await fastify.register(keyRoutes)
  await fastify.register(transferRoutes)
  await fastify.register(webhookRoutes)
  await fastify.register(seasonRoutes)
}
