// Liveness (no Redis) and readiness for orchestrators; no authentication. Readiness is 503
// whenever API requests would be: while draining for shutdown, and while Redis cannot serve
// them (a write probe, see redis/health.ts, since OOM refuses writes and answers PING).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { livenessResponses, readinessResponses } from '../schemas/health.js'
import { ServiceUnavailableError } from '../errors.js'

// No API key: the document's default security does not apply here.
const security: Array<Record<string, string[]>> = []

const healthRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  // Never shed (pipeline/shedding.ts): an overloaded instance is alive, and an orchestrator must not restart it.
  fastify.get('/healthz', {
    schema: { operationId: 'getHealth', tags: ['service'], summary: 'Liveness: the process serves requests', security, response: livenessResponses },
    config: { access: { kind: 'service' } }
  }, async () => ({ status: 'ok' as const }))

  fastify.get('/readyz', {
    schema: { operationId: 'getReadiness', tags: ['service'], summary: 'Readiness: not shutting down, and Redis serves', security, response: readinessResponses },
    config: { access: { kind: 'service' } }
  }, async () => {
    if (fastify.lifecycle.draining) throw new ServiceUnavailableError('this instance is shutting down', 1)
    const { redisHealth } = fastify
    const serves = redisHealth.outage === null && await redisHealth.check()
    if (!serves) throw new ServiceUnavailableError('the data store cannot serve now', redisHealth.outage?.retryAfterSeconds ?? 1)
    return { status: 'ok' as const }
  })
}

export default healthRoutes
