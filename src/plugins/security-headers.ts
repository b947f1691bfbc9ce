// Response headers for a JSON API: browsers must not sniff a body into something else, render
// it in a frame, or send the URL on as a referrer. Fastify sends no framework banner
// (no `x-powered-by`, no `server`); tests pin that it stays so.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer'
}

export default fp(async function securityHeadersPlugin (fastify: FastifyInstance) {
  // Callback hooks: every response passes here, and an async hook costs a promise each.
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(SECURITY_HEADERS)
    done(null, payload)
  })
}, { name: 'security-headers' })
