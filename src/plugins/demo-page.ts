// Demo mode's page at `/`: the demo server's public board (/p/{slug}: src/routes/public/, live
// over its stream), which the demo makes public (src/demo/prepare-demo.ts). Registered by
// server.ts only when it runs the demo (no REDIS_URL).
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

export default fp(async function demoPagePlugin (fastify: FastifyInstance, opts: { slug: string }) {
  fastify.get('/', { schema: { hide: true }, config: { access: { kind: 'service' } } }, async (_request, reply) =>
    await reply.header('cache-control', 'no-cache').redirect(`/p/${opts.slug}`, 302))
}, { name: 'demo-page' })
