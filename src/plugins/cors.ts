// CORS, for dashboards that call the API from a browser: off unless CORS_ORIGINS names the
// origins allowed (or `*`). A preflight is answered by @fastify/cors's own OPTIONS route, outside
// the API's scope, so it needs no key and is not counted; its hook runs on onRequest before the
// API's hooks (authentication, the rate limit, 304s), so their answers (401, 429, 304) carry the
// CORS headers too and a page can read them.
import fp from 'fastify-plugin'
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'

/** What a page may send: the key, conditional requests, its own request id, a stream's Last-Event-ID. */
export const CORS_ALLOWED_HEADERS = ['x-api-key', 'if-none-match', 'x-request-id', 'last-event-id']

/** What a page may read, beside the headers every CORS response exposes (Cache-Control…). */
export const CORS_EXPOSED_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'etag', 'retry-after', 'x-request-id']

/** How long a browser may reuse a preflight's answer (browsers cap it: Chromium at 2 hours). */
const PREFLIGHT_MAX_AGE_SECONDS = 3600

export default fp(async function corsPlugin (fastify: FastifyInstance) {
  const origins = fastify.config.corsOrigins
  if (origins.length === 0) return
  const allowed = new Set(origins)
  await fastify.register(cors, {
    // A listed origin is echoed back; any other gets no CORS header at all (the plugin's list
    // form would still send its other headers). Either way the response varies by Origin.
    origin: allowed.has('*') ? '*' : (origin, done) => { done(null, origin !== undefined && allowed.has(origin) ? origin : false) },
    methods: ['GET'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: PREFLIGHT_MAX_AGE_SECONDS,
    // The plugin's strict mode answers an OPTIONS without Access-Control-Request-Method with a
    // plain-text 400, outside the API's error shape; such a request gets the preflight answer.
    strictPreflight: false
  })
}, { name: 'cors', dependencies: ['config'] })
