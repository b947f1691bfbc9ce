// GET /api/v1/docs: an interactive reference (Swagger UI, through @fastify/swagger-ui) of the
// OpenAPI document, with "Try it out" against this instance. Swagger UI is chosen because the
// plugin serves every asset itself (the UI's scripts, styles and images come from the package,
// nothing from a CDN, so the page works offline and behind a firewall) and loads its settings
// from a script file, not an inline script, so the page runs under a strict CSP: scripts from
// this origin only. Like /healthz, it is outside the API's scope: no key, no rate limit.
import fp from 'fastify-plugin'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance, RouteOptions } from 'fastify'

export const DOCS_PREFIX = '/api/v1/docs'

/**
 * Replaces, for the page and its assets, the API's `default-src 'none'` (http/security-
 * headers.ts): Swagger UI sets inline styles, draws icons from data: URIs and fetches the
 * document (and the calls of "Try it out") from this origin.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/**
 * onRoute hook (app.ts adds it before @fastify/compress): the page's scripts and styles are sent
 * as they are. Compressing a bundle of megabytes on every request would be a CPU cost open to
 * anyone, on routes with no key and no rate limit; browsers revalidate them instead (ETag, 304).
 */
export function uncompressedDocsAssets (route: RouteOptions): void {
  if (route.url.startsWith(`${DOCS_PREFIX}/static/`)) route.compress = false
}

/** The docs page at `prefix`, titled `title`, of the document the instance's openapi plugin serves. */
export function docsPagePluginFor (prefix: string, title: string) {
  return fp(async function docsPagePlugin (fastify: FastifyInstance) {
    await fastify.register(swaggerUi, {
      routePrefix: prefix,
      staticCSP: DOCS_CSP,
      uiConfig: { deepLinking: true, displayOperationId: true, tryItOutEnabled: false },
      theme: { title }
    })
  }, { name: 'docs-page', dependencies: ['openapi'] })
}

export default docsPagePluginFor(DOCS_PREFIX, 'Guild leaderboard API')
