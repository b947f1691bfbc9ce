// GET /me: the key making the request (plan, servers, expiry), counted like any request.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { ReadRequestHeaders } from '../../schemas/headers.js'
import { keyInfoResponses } from '../../schemas/key-info.js'
import { InvalidApiKeyError } from '../../errors.js'
import { ALL_SERVERS } from '../../api-keys/server-scope.js'

const meRoutes: FastifyPluginAsyncTypebox = async (fastify) => {
  fastify.get('/me', {
    schema: {
      operationId: 'getMe',
      tags: ['keys'],
      summary: 'The API key making the request: its plan and the servers it reads',
      headers: ReadRequestHeaders,
      response: keyInfoResponses
    },
    config: { access: { kind: 'key', server: null } }
  }, async (request) => {
    const info = request.apiKey === null ? null : await fastify.apiKeys.get(request.apiKey.id)
    if (info === null) throw new InvalidApiKeyError() // deleted since it was authenticated
    return {
      key_id: info.id,
      name: info.name,
      plan: info.plan,
      servers: info.servers === ALL_SERVERS ? ALL_SERVERS : [...info.servers],
      expires_at: info.expiresAt?.toISOString() ?? null
    }
  })
}

export default meRoutes
