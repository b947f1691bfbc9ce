// The write API (/admin/v1) as its own application, on its own listener (ADMIN_PORT, on
// ADMIN_HOST): the public port never serves a write. Built by the same buildInstance as the
// read API (src/app.ts), so it shares the error handler, request ids, logging, the limits on
// headers and bodies, load shedding and the drain on shutdown (server.ts drives both).
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { type AppOptions, buildInstance, foundation } from '../app.js'
import type { Config } from '../config.js'
import lifecyclePlugin from '../pipeline/lifecycle.js'
import underPressurePlugin from '../pipeline/shedding.js'
import authPlugin from '../pipeline/auth.js'
import tokenAuthPlugin from '../pipeline/token-auth.js'
import { writerPlugin } from '../plugins/stores.js'
import { webhookStorePlugin } from '../plugins/webhooks.js'
import { requestMetricsPlugin } from '../plugins/metrics.js'
import type { Registry } from 'prom-client'
import { openapiPluginFor } from '../plugins/openapi.js'
import { docsPagePluginFor } from '../plugins/docs-page.js'
import healthRoutes from '../routes/health.js'
import adminRoutes from '../routes/admin/index.js'
import { adminNamedSchemas } from '../schemas/admin.js'
import { webhookEventsDocument, webhookNamedSchemas } from '../schemas/webhooks.js'
import { HealthStatus } from '../schemas/health.js'
import { ApiError } from '../schemas/common.js'

export const ADMIN_PREFIX = '/admin/v1'
/** The write API's Redis connection in CLIENT LIST. */
export const WRITE_API_CONNECTION_NAME = 'leaderboard-write-api'
const ADMIN_DOCS_PREFIX = `${ADMIN_PREFIX}/docs`

const adminDocument = openapiPluginFor({
  path: `${ADMIN_PREFIX}/openapi.json`,
  title: 'Guild leaderboard write API',
  description: 'Record XP, daily claims and settings, manage API keys, import and export: for bots in any language and ' +
    "for a dashboard's \"API keys\" section. Served on its own port (ADMIN_PORT); send `Authorization: Bearer <token>` " +
    '(tokens are made with `leaderboard tokens create`). Every write may carry `Idempotency-Key` to make a retry safe.',
  tags: [
    { name: 'members', description: 'XP awards, members, daily claims (scope write)' },
    { name: 'settings', description: "A server's settings: curve, multiplier, seasons, history, rules, profile (scope write)" },
    { name: 'seasons', description: "Ending a server's season by hand (scope write)" },
    { name: 'webhooks', description: "Webhooks: a server's events sent to a URL, signed as Standard Webhooks specifies (scope write)" },
    { name: 'keys', description: 'API keys of the read API (scope keys)' },
    { name: 'transfer', description: 'Import and export (scope transfer)' },
    { name: 'service', description: 'Liveness and readiness; no token' }
  ],
  securityScheme: { bearer: { type: 'http', scheme: 'bearer', description: 'A write-API token (`lba_…`)' } },
  schemas: [...adminNamedSchemas, ...webhookNamedSchemas, ApiError, HealthStatus],
  webhooks: webhookEventsDocument
})

export async function adminApp (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  await foundation(fastify, opts, WRITE_API_CONNECTION_NAME)
  // Bodies are JSON (the import takes its file as it comes): text is 415, not a string to validate.
  fastify.removeContentTypeParser('text/plain')
  await fastify.register(lifecyclePlugin)
  await fastify.register(underPressurePlugin)
  if (opts.metricsRegistry !== undefined) await fastify.register(requestMetricsPlugin, { registry: opts.metricsRegistry })
  await fastify.register(authPlugin) // the failed-authentication limit, shared with the read API
  await fastify.register(tokenAuthPlugin)
  await fastify.register(writerPlugin)
  await fastify.register(webhookStorePlugin)
  await fastify.register(adminDocument)
  await fastify.register(docsPagePluginFor(ADMIN_DOCS_PREFIX, 'Guild leaderboard write API'))
  await fastify.register(healthRoutes)
  await fastify.register(adminRoutes, { prefix: ADMIN_PREFIX })
}

/**
 * An instance of the write API, for server.ts and the tests alike; `metricsRegistry` is the read
 * API's (`() => app.metricsRegistry`), so that write requests are measured beside reads.
 */
export function buildAdminApp (config: Config, options: FastifyServerOptions = {}, metricsRegistry?: () => Registry | null) {
  return buildInstance(config, adminApp, {
    prefixes: [ADMIN_PREFIX],
    kinds: ['token'],
    documents: [ADMIN_DOCS_PREFIX],
    hooks: (fastify) => ({ authenticateToken: fastify.authenticateToken, checkTokenServer: fastify.checkTokenServer, idempotency: fastify.claimIdempotencyKey })
  }, options, { metricsRegistry })
}
