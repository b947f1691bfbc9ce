import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'

declare module 'fastify' {
  interface FastifyInstance {
    config: Config
  }
}

export default fp(async function configPlugin (fastify: FastifyInstance, opts: { config: Config }) {
  fastify.decorate('config', opts.config)
}, { name: 'config' })
