// The application as a Fastify plugin, and `buildApp`, the one function that makes an
// instance of it: the server and the tests both use it, with the config passed in.
import Fastify, { type FastifyInstance, type FastifyPluginAsync, type FastifyServerOptions } from 'fastify'
import fp from 'fastify-plugin'
import { randomUUID } from 'node:crypto'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { Config } from './config.js'
import type { Registry } from 'prom-client'
import { lazyChildLoggerFactory, loggerOptions, RequestLogController } from './logger.js'
import configPlugin from './plugins/config.js'
import redisPlugin from './plugins/redis.js'
import redisMigrationPlugin from './plugins/redis-migration.js'
import { apiKeysPlugin, leaderboardReaderPlugin, slidingWindowPlugin } from './plugins/stores.js'
import errorHandler, { sendError } from './plugins/error-handler.js'
import authPlugin from './pipeline/auth.js'
import metricsPlugin from './plugins/metrics.js'
import { responseCachePlugin } from './pipeline/reads.js'
import openapiPlugin from './plugins/openapi.js'
import docsPagePlugin, { DOCS_PREFIX, uncompressedDocsAssets } from './plugins/docs-page.js'
import compress from '@fastify/compress'
import { COMPRESSION_THRESHOLD } from './http/encoding.js'
import lifecyclePlugin from './pipeline/lifecycle.js'
import underPressurePlugin from './pipeline/shedding.js'
import corsPlugin from './plugins/cors.js'
import { webhookDeliveryPlugin } from './plugins/webhooks.js'
import calendarTickerPlugin from './plugins/calendar-ticker.js'
import healthRoutes from './routes/health.js'
import apiRoutes, { API_PREFIX, PUBLIC_PREFIX } from './routes/api/index.js'
import { trustProxyOption } from './http/client-address.js'
import { httpServerOptions } from './http/server-options.js'
import { REQUEST_ID_PATTERN } from './schemas/headers.js'
import { SECURITY_HEADERS } from './http/security-headers.js'
import { accessGuard, type GuardOptions } from './pipeline/access.js'
import { closedQueryString, requestValidators } from './http/request-validation.js'

export { API_PREFIX }

export interface AppOptions {
  config: Config
  /**
   * The registry of the API's metrics (served on METRICS_PORT), for the write API's requests to
   * go into the same `http_request_duration_seconds`; read when a request completes.
   */
  metricsRegistry?: () => Registry | null
}

/** The read API's Redis connection in CLIENT LIST. */
export const API_CONNECTION_NAME = 'leaderboard-api'

/**
 * What both listeners stand on, in order: the config, the Redis connection (migrated at start;
 * `connectionName` in CLIENT LIST), the reader, the key store, the limiter and the error handler.
 */
export async function foundation (fastify: FastifyInstance, opts: AppOptions, connectionName: string): Promise<void> {
  await fastify.register(configPlugin, { config: opts.config })
  await fastify.register(redisPlugin, { connectionName })
  await fastify.register(redisMigrationPlugin)
  await fastify.register(leaderboardReaderPlugin)
  await fastify.register(apiKeysPlugin)
  await fastify.register(slidingWindowPlugin)
  await fastify.register(errorHandler)
}

export async function app (fastify: FastifyInstance, opts: AppOptions): Promise<void> {
  await foundation(fastify, opts, API_CONNECTION_NAME)
  // Before the hooks that can refuse a request (shutdown, load shedding, the API's own), so a
  // page can read their answers.
  await fastify.register(corsPlugin)
  await fastify.register(lifecyclePlugin)
  await fastify.register(underPressurePlugin)
  // Before compress, which settles each route's compression when the route is added.
  fastify.addHook('onRoute', uncompressedDocsAssets)
  // Bodies the read routes do not compress themselves (the OpenAPI document, say). No request
  // decompression: no route of this listener takes a body, and it would be a hook on each request.
  await fastify.register(compress, { threshold: COMPRESSION_THRESHOLD, encodings: ['br', 'gzip'], globalDecompression: false })
  await fastify.register(authPlugin)
  await fastify.register(responseCachePlugin)
  await fastify.register(metricsPlugin)
  await fastify.register(webhookDeliveryPlugin)
  await fastify.register(openapiPlugin)
  await fastify.register(docsPagePlugin)
  await fastify.register(calendarTickerPlugin)
  await fastify.register(healthRoutes)
  await fastify.register(apiRoutes)
}

const REQUEST_ID = new RegExp(REQUEST_ID_PATTERN)

/** The public API's routes: key access under /api/v1, public boards (no key) under /public/v1 and at /p/, the docs page's assets open. */
const apiGuard = (): GuardOptions => ({
  prefixes: [API_PREFIX, PUBLIC_PREFIX],
  kinds: ['key', 'public'],
  documents: [DOCS_PREFIX],
  hooks: (fastify) => ({
    authenticate: fastify.authenticate,
    admit: fastify.admit,
    reserveStream: fastify.live?.reserve,
    admitPublic: fastify.admitPublic,
    reservePublicStream: fastify.publicBoards?.reserve
  })
})

export function buildApp (config: Config, options: FastifyServerOptions = {}) {
  return buildInstance(config, app, apiGuard(), options)
}

/**
 * A Fastify instance running `plugin` with what every listener of the service shares: logging,
 * request ids, the limits on headers and bodies, timeouts, the security headers, and the guard
 * that holds each route to its declared access (src/pipeline/access.ts). The public API
 * (buildApp) and the write API (src/admin/admin-app.ts) are both made by it.
 */
export function buildInstance (config: Config, plugin: FastifyPluginAsync<AppOptions>, guard: GuardOptions, options: FastifyServerOptions = {},
  appOptions: Omit<AppOptions, 'config'> = {}) {
  const fastify = Fastify({
    logger: loggerOptions(config.logLevel),
    logController: new RequestLogController(),
    trustProxy: trustProxyOption(config.trustProxy),
    ...httpServerOptions(config),
    // Honour a caller's request id when it is sane, so logs can be joined across services:
    // genReqId alone decides (a requestIdHeader would make Fastify take any value verbatim).
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id']
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID()
    },
    // Errors raised before routing (a malformed URL) bypass the error handler: same shape here.
    // (They come before the onRequest hook below, so the request id is set here too.)
    frameworkErrors: (error, request, reply) => {
      sendError(reply.header('x-request-id', request.id), 'invalid_parameter', error.message)
    },
    schemaController: { compilersFactory: { buildValidator: requestValidators() } },
    ...options
  }).withTypeProvider<TypeBoxTypeProvider>()
  fastify.setChildLoggerFactory(lazyChildLoggerFactory)
  // Before any route is added, so that none escapes it.
  fastify.addHook('onRoute', accessGuard(guard))
  fastify.addHook('onRoute', closedQueryString)
  fastify.decorateRequest('refusal', null)
  fastify.decorateRequest('publicServer', undefined)
  // The headers every response carries, set first (an onSend hook would cost every request a
  // hook runner more): the request id and the security headers.
  fastify.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).headers(SECURITY_HEADERS)
    done()
  })
  fastify.register(fp(plugin), { ...appOptions, config })
  return fastify
}
