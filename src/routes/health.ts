// Liveness (no Redis) and readiness (Redis answers) for orchestrators; no authentication.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { ErrorResponse } from '../schemas/common.js'

const Status = Type.Object({ status: Type.Literal('ok') }, { description: 'Healthy' })

const healthRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/healthz', {
    schema: { tags: ['service'], summary: 'Liveness: the process serves requests', response: { 200: Status } }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/readyz', {
    schema: { tags: ['service'], summary: 'Readiness: Redis answers', response: { 200: Status, 503: ErrorResponse } }
  }, async () => {
    await fastify.checkRedis()
    return { status: 'ok' as const }
  })
}

export default healthRoutes
