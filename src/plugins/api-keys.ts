// The API-key store (src/api-keys/api-keys.ts) on the app's Redis connection.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ApiKeyStore } from '../api-keys/api-keys.js'

declare module 'fastify' {
  interface FastifyInstance {
    apiKeys: ApiKeyStore
  }
}

export default fp(async function apiKeysPlugin (fastify: FastifyInstance) {
  fastify.decorate('apiKeys', new ApiKeyStore(fastify.redisClient, fastify.keys))
}, { name: 'api-keys', dependencies: ['redis'] })
